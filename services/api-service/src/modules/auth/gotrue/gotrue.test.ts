import { latestMessage, linkIn, listen, uniqueEmail } from '@hwp/platform/test-kit';
import { GoTrueClient } from '@supabase/auth-js';
import request from 'supertest';
import { type ApiTestService, startApi } from '#test/api-test-kit';
import { supabaseClientFlow } from '#test/supabase-flow';

/**
 * The real Supabase clients, unchanged, against `/auth/v1`: what an app written for Supabase Auth
 * does on day one. Email confirmation is on, as in production.
 */
let service: ApiTestService;
let server: Awaited<ReturnType<typeof listen>>;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  service = await startApi({
    AUTH_REQUIRE_CONFIRMATION: 'true',
    AUTH_REDIRECT_ALLOW_LIST: 'http://app.example.test',
  });
  server = await listen(service.app);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await service?.stop();
});

describe('GoTrue surface with @supabase/supabase-js and @supabase/auth-js', () => {
  test('signUp, verifyOtp, password sign-in, refresh, getUser, updateUser, OTP sign-in, getClaims, signOut', async () => {
    await supabaseClientFlow(server.url, (email, template) => latestMessage(service.app, email, template));
  }, 60_000);

  test('errors carry GoTrue codes and the API version header; unknown GoTrue fields are ignored', async () => {
    const res = await request(service.app)
      .post('/auth/v1/signup')
      .send({
        email: uniqueEmail('gotrue'),
        password: 'short',
        gotrue_meta_security: { captcha_token: null },
        code_challenge: null,
        code_challenge_method: null,
      });
    expect(res.status).toBe(400);
    expect(res.headers['x-supabase-api-version']).toBe('2024-01-01');
    expect(res.body).toMatchObject({ code: 'weak_password', message: expect.any(String) });

    const invalid = await request(service.app)
      .post('/auth/v1/token?grant_type=password')
      .send({ email: 'x' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ code: 'validation_failed', msg: expect.any(String) });

    const missing = await request(service.app).get('/auth/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found' });

    const jwks = await request(service.app).get('/auth/v1/.well-known/jwks.json').expect(200);
    expect(jwks.body.keys[0]).toMatchObject({ kty: expect.any(String), kid: expect.any(String) });

    // user_metadata is a free object on the interface's own routes too.
    const own = await request(service.app)
      .post('/auth/signup')
      .send({ email: uniqueEmail('own'), password: PASSWORD, data: { team: 'mech', level: 3 } });
    expect(own.status).toBe(200);
    expect(own.body.user.user_metadata).toEqual({ team: 'mech', level: 3 });

    const metadata = await request(service.app)
      .post('/auth/v1/signup')
      .send({ email: uniqueEmail('gotrue'), password: PASSWORD, data: { team: 'x'.repeat(20_000) } });
    expect(metadata.status).toBe(400);
    expect(metadata.body.message).toMatch(/data/);
  });

  test('PKCE: the emailed link redirects with ?code=, which only the verifier holder exchanges, once', async () => {
    const pkce = {
      persistSession: false,
      autoRefreshToken: false,
      detectSessionInUrl: false,
      flowType: 'pkce' as const,
    };
    const auth = new GoTrueClient({ url: `${server.url}/auth/v1`, ...pkce });
    const email = uniqueEmail('pkce');
    const sent = await auth.signInWithOtp({
      email,
      options: { emailRedirectTo: 'http://app.example.test/callback' },
    });
    expect(sent.error).toBeNull();

    const link = linkIn(await latestMessage(service.app, email, 'magiclink'));
    const opened = await request(service.app).get(`${link.pathname}${link.search}`).expect(303);
    const target = new URL(opened.headers.location);
    expect(`${target.origin}${target.pathname}`).toBe('http://app.example.test/callback');
    expect(target.hash).toBe('');
    const code = target.searchParams.get('code') as string;
    expect(code).toEqual(expect.any(String));

    // Another client (no verifier of this flow) cannot use the code; it is spent by the attempt.
    const thief = await request(service.app)
      .post('/auth/v1/token?grant_type=pkce')
      .send({ auth_code: code, code_verifier: 'x'.repeat(43) });
    expect(thief.status).toBe(400);
    expect(thief.body.code).toBe('bad_code_verifier');
    const spent = await auth.exchangeCodeForSession(code);
    expect(spent.error).toMatchObject({ code: 'flow_state_not_found' });

    // A fresh flow, exchanged by its own client: a session.
    const second = new GoTrueClient({ url: `${server.url}/auth/v1`, ...pkce });
    const other = uniqueEmail('pkce');
    expect(
      (
        await second.signInWithOtp({
          email: other,
          options: { emailRedirectTo: 'http://app.example.test/cb' },
        })
      ).error,
    ).toBeNull();
    const link2 = linkIn(await latestMessage(service.app, other, 'magiclink'));
    const opened2 = await request(service.app).get(`${link2.pathname}${link2.search}`).expect(303);
    const code2 = new URL(opened2.headers.location).searchParams.get('code') as string;
    const exchanged = await second.exchangeCodeForSession(code2);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.session?.user.email).toBe(other);
    expect((await second.getUser()).data.user?.email).toBe(other);
    const again = await request(service.app)
      .post('/auth/v1/token?grant_type=pkce')
      .send({ auth_code: code2, code_verifier: 'y'.repeat(43) });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('flow_state_not_found');
  });
});
