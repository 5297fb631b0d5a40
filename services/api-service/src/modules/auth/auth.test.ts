import { randomBytes } from 'node:crypto';
import { fakeOnly } from '@hwp/platform/test-kit';
import * as argon2 from '@node-rs/argon2';
import request from 'supertest';
import {
  type ApiTestService,
  as,
  codeIn,
  latestMessage,
  linkIn,
  newClientIp,
  signUp,
  startApi,
  uniqueEmail,
  uniquePhone,
} from '../../../test/support/api-test-kit';
import { expectSchema } from '../../../test/support/openapi-schemas';
import { apiService } from '../../service';

// argon2's verify, still doing the real work, but recording which hashes it was asked to check.
jest.mock('@node-rs/argon2', () => {
  const actual = jest.requireActual<typeof import('@node-rs/argon2')>('@node-rs/argon2');
  return { ...actual, verify: jest.fn(actual.verify) };
});

const PASSWORD = 'correct horse battery';

/** Signup must be confirmed with the emailed code. */
let api: ApiTestService;
/**
 * Signup confirms at once; the account-wide login ceiling is 8 failures. Expiry windows are the
 * production defaults: the cases that need one to pass move the clock (withClockMovedOn).
 */
let open: ApiTestService;

beforeAll(async () => {
  [api, open] = await Promise.all([
    startApi({ AUTH_REQUIRE_CONFIRMATION: 'true' }),
    startApi({ LOGIN_MAX_FAILURES_PER_ACCOUNT_TOTAL: '8' }),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([api?.stop(), open?.stop()]);
});

function post(app: ApiTestService['app'], path: string, ip = newClientIp()) {
  return request(app).post(path).set('X-Forwarded-For', ip);
}

async function expectAuthResponse(app: ApiTestService['app'], body: unknown) {
  await expectSchema(app, 'AuthResponse', body);
}

/**
 * Runs `check` with this process's clock moved `ms` ahead (Date only: timers and I/O run as usual,
 * and the clock keeps going from there). The API host decides expiry by that clock, so a case that
 * needs time to pass does not wait for it, and a slow machine cannot stretch or shrink the window.
 */
async function withClockMovedOn<T>(ms: number, check: () => Promise<T>): Promise<T> {
  fakeOnly(['Date'], { advanceTimers: true });
  try {
    jest.setSystemTime(Date.now() + ms);
    return await check();
  } finally {
    jest.useRealTimers();
  }
}

describe('signup and login by email', () => {
  test('signup waits for confirmation; the emailed code confirms and signs in; then password login works', async () => {
    const email = uniqueEmail('confirm');
    const ip = newClientIp();
    const signup = await post(api.app, '/auth/signup', ip).send({
      email,
      password: PASSWORD,
      data: { first_name: 'Ada' },
    });
    expect(signup.status).toBe(200);
    expect(signup.body.session).toBeNull();
    expect(signup.body.user).toMatchObject({
      email,
      email_confirmed_at: null,
      user_metadata: { first_name: 'Ada' },
    });
    await expectSchema(api.app, 'SignupResponse', signup.body);

    const early = await post(api.app, '/auth/login', ip).send({ email, password: PASSWORD });
    expect(early.status).toBe(400);
    expect(early.body.code).toBe('email_not_confirmed');

    const message = await latestMessage(api.app, email, 'signup');
    const verified = await post(api.app, '/auth/verify', ip).send({
      type: 'signup',
      email,
      token: codeIn(message),
    });
    expect(verified.status).toBe(200);
    await expectAuthResponse(api.app, verified.body);
    expect(verified.body.user.email_confirmed_at).toEqual(expect.any(String));
    expect(verified.body.user.app_metadata).toEqual({ provider: 'email', providers: ['email'] });
    expect(verified.body.user.identities).toHaveLength(1);
    expect(verified.body.user.identities[0]).toMatchObject({
      provider: 'email',
      email,
      user_id: verified.body.user.id,
    });

    const login = await post(api.app, '/auth/login', ip).send({
      email: email.toUpperCase(),
      password: PASSWORD,
    });
    expect(login.status).toBe(200);
    await expectAuthResponse(api.app, login.body);
    expect(login.body.session).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const profile = await as(api.app, { token: login.body.session.access_token, ip }).get('/profile');
    expect(profile.status).toBe(200);
    expect(profile.body.email).toBe(email);
  });

  test('a used signup code cannot be used again', async () => {
    const email = uniqueEmail('reuse');
    await post(api.app, '/auth/signup').send({ email, password: PASSWORD }).expect(200);
    const code = codeIn(await latestMessage(api.app, email, 'signup'));
    await post(api.app, '/auth/verify').send({ type: 'signup', email, token: code }).expect(200);
    const again = await post(api.app, '/auth/verify').send({ type: 'signup', email, token: code });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('otp_expired');
  });

  test('with confirmation off, a second signup with a confirmed email is refused with email_exists (as GoTrue)', async () => {
    const user = await signUp(open.app);
    const res = await post(open.app, '/auth/signup').send({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('email_exists');
  });

  test('short passwords are refused with weak_password, and email plus phone together with a field error', async () => {
    const weak = await post(open.app, '/auth/signup').send({ email: uniqueEmail(), password: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('weak_password');
    const both = await post(open.app, '/auth/signup').send({
      email: uniqueEmail(),
      phone: uniquePhone(),
      password: PASSWORD,
    });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('validation_failed');
  });

  test('wrong password and unknown email give the same answer, each after an argon2id check of the same cost', async () => {
    const user = await signUp(open.app);
    const verify = jest.mocked(argon2.verify);
    /** One failed login, with the hashes argon2 checked its password against and what it answered. */
    const attempt = async (email: string) => {
      const password = `not the password ${randomBytes(4).toString('hex')}`;
      const res = await post(open.app, '/auth/login').send({ email, password });
      const calls = verify.mock.calls.flatMap(([hash, given], i) =>
        given === password ? [{ hash: String(hash), answer: verify.mock.results[i].value }] : [],
      );
      return {
        res,
        hashes: calls.map((call) => call.hash),
        answers: await Promise.all(calls.map((call) => call.answer)),
      };
    };
    const wrong = await attempt(user.email);
    const unknown = await attempt(uniqueEmail('nobody'));

    expect([wrong.res.status, unknown.res.status]).toEqual([400, 400]);
    const strip = ({ timestamp: _t, ...rest }: Record<string, unknown>) => rest;
    expect(strip(wrong.res.body)).toEqual(strip(unknown.res.body));
    expect(wrong.res.body).toMatchObject({
      code: 'invalid_credentials',
      detail: 'Invalid login credentials',
    });
    // Not the fast path: the unknown account is checked against a dummy hash of the same cost, to the
    // end (bench/auth measures how long both take).
    const { PASSWORD_HASH_MEMORY_KIB: m, PASSWORD_HASH_ITERATIONS: t } = open.deps.config;
    const cost = (phc: string) => phc.split('$').slice(1, 4).join('$');
    expect(wrong.hashes.map(cost)).toEqual([`argon2id$v=19$m=${m},t=${t},p=1`]);
    expect(unknown.hashes.map(cost)).toEqual(wrong.hashes.map(cost));
    expect(unknown.hashes).not.toEqual(wrong.hashes);
    expect([...wrong.answers, ...unknown.answers]).toEqual([false, false]);
  });
});

describe('phone', () => {
  test('phone signup and phone login; phone OTP by SMS signs in', async () => {
    const phone = uniquePhone();
    const ip = newClientIp();
    const signup = await post(open.app, '/auth/signup', ip).send({ phone, password: PASSWORD });
    expect(signup.status).toBe(200);
    expect(signup.body.user).toMatchObject({
      phone,
      email: '',
      app_metadata: { provider: 'phone', providers: ['phone'] },
    });
    const login = await post(open.app, '/auth/phone-login', ip).send({
      phone_number: phone,
      password: PASSWORD,
    });
    expect(login.status).toBe(200);
    await expectAuthResponse(open.app, login.body);

    const otpPhone = uniquePhone();
    const sent = await post(api.app, '/auth/phone-otp', ip).send({ phone_number: otpPhone });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ message: expect.any(String) });
    const sms = await latestMessage(api.app, otpPhone, 'phone_otp');
    const verified = await post(api.app, '/auth/verify-phone-otp', ip).send({
      phone_number: otpPhone,
      token: codeIn(sms),
    });
    expect(verified.status).toBe(200);
    await expectAuthResponse(api.app, verified.body);
    expect(verified.body.user).toMatchObject({ phone: otpPhone, phone_confirmed_at: expect.any(String) });
  });

  test('an OTP is void after 5 wrong tries, even for the right code', async () => {
    const phone = uniquePhone();
    await post(api.app, '/auth/phone-otp').send({ phone_number: phone }).expect(200);
    const code = codeIn(await latestMessage(api.app, phone, 'phone_otp'));
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await post(api.app, '/auth/verify-phone-otp').send({ phone_number: phone, token: wrong });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('otp_invalid');
    }
    const right = await post(api.app, '/auth/verify-phone-otp').send({ phone_number: phone, token: code });
    expect(right.status).toBe(401);
    expect(right.body.code).toBe('otp_expired');
  });

  test('an OTP is void after its expiry', async () => {
    const phone = uniquePhone();
    await post(open.app, '/auth/phone-otp').send({ phone_number: phone }).expect(200);
    const code = codeIn(await latestMessage(open.app, phone, 'phone_otp'));
    const res = await withClockMovedOn((open.deps.config.OTP_TTL_SECONDS + 1) * 1000, () =>
      post(open.app, '/auth/verify-phone-otp').send({ phone_number: phone, token: code }),
    );
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('otp_expired');
  });

  test('asking for a second code within 60 s answers 429 with Retry-After, the same for unknown numbers', async () => {
    const phone = uniquePhone();
    await post(api.app, '/auth/phone-otp').send({ phone_number: phone }).expect(200);
    const again = await post(api.app, '/auth/phone-otp').send({ phone_number: phone });
    expect(again.status).toBe(429);
    expect(again.body.code).toBe('rate_limited');
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);

    const email = uniqueEmail('nobody');
    await post(api.app, '/auth/recover').send({ email }).expect(200);
    const recoverAgain = await post(api.app, '/auth/recover').send({ email });
    expect(recoverAgain.status).toBe(429);
  });
});

describe('magic link', () => {
  test('the emailed link signs in through a redirect carrying the session in the fragment', async () => {
    const email = uniqueEmail('magic');
    const sent = await post(api.app, '/auth/magic-link').send({ email });
    expect(sent.status).toBe(200);
    const message = await latestMessage(api.app, email, 'magiclink');
    const link = linkIn(message);
    expect(link.pathname).toBe('/auth/verify');
    const res = await request(api.app).get(`${link.pathname}${link.search}`);
    expect(res.status).toBe(303);
    const location = new URL(res.headers.location);
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get('token_type')).toBe('bearer');
    const token = fragment.get('access_token') as string;
    const profile = await as(api.app, { token, ip: newClientIp() }).get('/profile');
    expect(profile.status).toBe(200);
    expect(profile.body.email).toBe(email);

    // Single use: the same link now redirects with an error.
    const again = await request(api.app).get(`${link.pathname}${link.search}`);
    expect(again.status).toBe(303);
    expect(new URLSearchParams(new URL(again.headers.location).hash.slice(1)).get('error_code')).toBe(
      'otp_expired',
    );
  });

  test('the code of the magic-link email works with POST /auth/verify', async () => {
    const email = uniqueEmail('magic-code');
    await post(api.app, '/auth/magic-link').send({ email }).expect(200);
    const code = codeIn(await latestMessage(api.app, email, 'magiclink'));
    const res = await post(api.app, '/auth/verify').send({ type: 'magiclink', email, token: code });
    expect(res.status).toBe(200);
    await expectAuthResponse(api.app, res.body);
  });

  test('a redirect_to outside the allowed origins is replaced by the site URL', async () => {
    const email = uniqueEmail('redirect');
    await post(api.app, '/auth/magic-link')
      .send({ email, redirect_to: 'https://evil.example/steal' })
      .expect(200);
    const link = linkIn(await latestMessage(api.app, email, 'magiclink'));
    expect(link.searchParams.get('redirect_to')).not.toContain('evil.example');
    const res = await request(api.app).get(`${link.pathname}${link.search}`);
    expect(res.headers.location).not.toContain('evil.example');
  });
});

describe('refresh tokens', () => {
  test('refresh rotates the pair; the new access token works', async () => {
    const user = await signUp(open.app);
    const res = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: user.session.refresh_token,
    });
    expect(res.status).toBe(200);
    await expectAuthResponse(open.app, res.body);
    expect(res.body.session.refresh_token).not.toBe(user.session.refresh_token);
    const profile = await as(open.app, { token: res.body.session.access_token, ip: user.ip }).get('/profile');
    expect(profile.status).toBe(200);

    const viaToken = await post(open.app, '/auth/token?grant_type=refresh_token', user.ip).send({
      refresh_token: res.body.session.refresh_token,
    });
    expect(viaToken.status).toBe(200);
  });

  test('a retry within the grace window gets the current pair; reuse after it revokes the session', async () => {
    const user = await signUp(open.app);
    const first = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: user.session.refresh_token,
    });
    const retry = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: user.session.refresh_token,
    });
    expect(retry.status).toBe(200);
    expect(retry.body.session.refresh_token).toBe(first.body.session.refresh_token);

    const replay = await withClockMovedOn(
      (open.deps.config.REFRESH_TOKEN_REUSE_INTERVAL_SECONDS + 1) * 1000,
      () => post(open.app, '/auth/refresh', user.ip).send({ refresh_token: user.session.refresh_token }),
    );
    expect(replay.status).toBe(401);
    // The whole session is gone: the newest token fails too.
    const newest = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: first.body.session.refresh_token,
    });
    expect(newest.status).toBe(401);
  });

  test('reusing a token older than the immediate predecessor revokes the session at once', async () => {
    const user = await signUp(open.app);
    const t1 = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: user.session.refresh_token,
    });
    const t2 = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: t1.body.session.refresh_token,
    });
    expect(t2.status).toBe(200);
    const replay = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: user.session.refresh_token,
    });
    expect(replay.status).toBe(401);
    const newest = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: t2.body.session.refresh_token,
    });
    expect(newest.status).toBe(401);
    expect(newest.body.code).toBe('unauthorized');
  });
});

describe('logout', () => {
  /**
   * The access token is refused (401) 5 s after the logout, the revocation delay of DECISIONS.md
   * section 1: asked once, with the clock moved on 5 s, instead of polled for 5 s of wall clock.
   */
  async function expectRefusedWithin5s(app: ApiTestService['app'], user: { token: string; ip: string }) {
    const res = await withClockMovedOn(5_000, () => as(app, user).get('/auth/user'));
    expect(res.status).toBe(401);
  }

  test('after logout, refresh fails at once and the access token within 5 s', async () => {
    const user = await signUp(open.app);
    const out = await as(open.app, user).post('/auth/logout');
    expect(out.status).toBe(204);
    const refresh = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: user.session.refresh_token,
    });
    expect(refresh.status).toBe(401);
    await expectRefusedWithin5s(open.app, user);
  });

  test('another replica stops accepting the access token within 5 s of the logout', async () => {
    // A copy of the deps is another runtime: its features (and session cache) are built anew.
    const replica = apiService.createApp({ ...open.deps });
    const user = await signUp(open.app);
    // The replica has checked (and cached) the session as alive.
    await as(replica, user).get('/auth/user').expect(200);
    await as(open.app, user).post('/auth/logout').expect(204);
    await expectRefusedWithin5s(replica, user);
  });

  test('scope=others ends the other sessions only', async () => {
    const user = await signUp(open.app);
    const second = await post(open.app, '/auth/login', user.ip).send({
      email: user.email,
      password: user.password,
    });
    await as(open.app, user).post('/auth/logout?scope=others').expect(204);
    await expectRefusedWithin5s(open.app, { token: second.body.session.access_token, ip: user.ip });
    await as(open.app, user).get('/auth/user').expect(200);
  });
});

describe('recovery and account changes', () => {
  test('recovery code signs in; a new password replaces the old one and ends other sessions', async () => {
    const user = await signUp(open.app);
    const other = await post(open.app, '/auth/login', user.ip).send({
      email: user.email,
      password: user.password,
    });
    await post(open.app, '/auth/recover', user.ip).send({ email: user.email }).expect(200);
    const code = codeIn(await latestMessage(open.app, user.email, 'recovery'));
    const recovered = await post(open.app, '/auth/verify', user.ip).send({
      type: 'recovery',
      email: user.email,
      token: code,
    });
    expect(recovered.status).toBe(200);
    const session = { token: recovered.body.session.access_token, ip: user.ip };
    const changed = await as(open.app, session)
      .put('/auth/user')
      .send({ password: 'a brand new password', data: { last_name: 'Lovelace' } });
    expect(changed.status).toBe(200);
    await expectSchema(open.app, 'User', changed.body);
    expect(changed.body.user_metadata.last_name).toBe('Lovelace');

    const oldLogin = await post(open.app, '/auth/login', user.ip).send({
      email: user.email,
      password: user.password,
    });
    expect(oldLogin.status).toBe(400);
    await post(open.app, '/auth/login', user.ip)
      .send({ email: user.email, password: 'a brand new password' })
      .expect(200);
    const otherRefresh = await post(open.app, '/auth/refresh', user.ip).send({
      refresh_token: other.body.session.refresh_token,
    });
    expect(otherRefresh.status).toBe(401);
  });
});

describe('cookies and CSRF', () => {
  function cookieMap(setCookie: string[] | string | undefined): Record<string, string> {
    const list = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
    return Object.fromEntries(
      list.map((c) => c.split(';')[0].split('=')).map(([k, ...v]) => [k, v.join('=')]),
    );
  }

  test('?cookie=true sets HttpOnly cookies; state changes need the CSRF header; refresh and logout work by cookie', async () => {
    const user = await signUp(open.app);
    const login = await post(open.app, '/auth/login?cookie=true', user.ip).send({
      email: user.email,
      password: user.password,
    });
    expect(login.status).toBe(200);
    const raw = login.headers['set-cookie'] as unknown as string[];
    expect(raw.find((c) => c.startsWith('hwp-access-token='))).toMatch(/HttpOnly/);
    expect(raw.find((c) => c.startsWith('hwp-refresh-token='))).toMatch(/HttpOnly/);
    expect(raw.find((c) => c.startsWith('hwp-csrf-token='))).not.toMatch(/HttpOnly/);
    const jar = cookieMap(raw);
    const cookieHeader = `hwp-access-token=${jar['hwp-access-token']}; hwp-csrf-token=${jar['hwp-csrf-token']}`;

    const read = await request(open.app)
      .get('/profile')
      .set('Cookie', cookieHeader)
      .set('X-Forwarded-For', user.ip);
    expect(read.status).toBe(200);
    const noCsrf = await request(open.app)
      .put('/profile')
      .set('Cookie', cookieHeader)
      .set('X-Forwarded-For', user.ip)
      .send({ first_name: 'Grace' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.code).toBe('forbidden');
    const withCsrf = await request(open.app)
      .put('/profile')
      .set('Cookie', cookieHeader)
      .set('X-CSRF-Token', jar['hwp-csrf-token'])
      .set('X-Forwarded-For', user.ip)
      .send({ first_name: 'Grace' });
    expect(withCsrf.status).toBe(200);
    expect(withCsrf.body.first_name).toBe('Grace');

    const refreshCookie = `hwp-refresh-token=${jar['hwp-refresh-token']}`;
    const refreshNoCsrf = await request(open.app)
      .post('/auth/refresh')
      .set('Cookie', refreshCookie)
      .set('X-Forwarded-For', user.ip)
      .send({});
    expect(refreshNoCsrf.status).toBe(403);
    const refreshed = await request(open.app)
      .post('/auth/refresh')
      .set('Cookie', refreshCookie)
      .set('X-CSRF-Token', jar['hwp-csrf-token'])
      .set('X-Forwarded-For', user.ip)
      .send({});
    expect(refreshed.status).toBe(200);
    expect(cookieMap(refreshed.headers['set-cookie'])['hwp-refresh-token']).toBe(
      refreshed.body.session.refresh_token,
    );

    const out = await request(open.app)
      .post('/auth/logout')
      .set('Cookie', cookieHeader)
      .set('X-CSRF-Token', jar['hwp-csrf-token'])
      .set('X-Forwarded-For', user.ip);
    expect(out.status).toBe(204);
    expect(cookieMap(out.headers['set-cookie'])['hwp-access-token']).toBe('');
  });
});

describe('rate limits', () => {
  test('the 61st request in a minute on a standard route is 429 with Retry-After', async () => {
    const user = await signUp(open.app);
    const client = as(open.app, user);
    for (let i = 0; i < 60; i++) {
      const res = await client.get('/auth/user');
      expect(res.status).toBe(200);
    }
    const over = await client.get('/auth/user');
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(over.headers['ratelimit-policy']).toContain('q=60');
    expect(over.headers.ratelimit).toBeDefined();
  });

  test('5 failed logins for one account from one address lock that address out; the owner elsewhere still signs in', async () => {
    const user = await signUp(open.app);
    const attacker = newClientIp();
    for (let i = 0; i < 5; i++) {
      const res = await post(open.app, '/auth/login', attacker).send({
        email: user.email,
        password: 'wrong password',
      });
      expect(res.status).toBe(400);
    }
    const locked = await post(open.app, '/auth/login', attacker).send({
      email: user.email,
      password: user.password,
    });
    expect(locked.status).toBe(429);
    expect(locked.headers['retry-after']).toBeDefined();
    const owner = await post(open.app, '/auth/login', user.ip).send({
      email: user.email,
      password: user.password,
    });
    expect(owner.status).toBe(200);
  });

  test('failures spread over many addresses stop at the account-wide ceiling', async () => {
    const user = await signUp(open.app);
    for (let i = 0; i < 8; i++) {
      const res = await post(open.app, '/auth/login').send({ email: user.email, password: 'wrong password' });
      expect(res.status).toBe(400);
    }
    const ceiling = await post(open.app, '/auth/login').send({
      email: user.email,
      password: 'wrong password',
    });
    expect(ceiling.status).toBe(429);
  });
});

describe('concurrency', () => {
  test('simultaneous logins to one account all succeed (no lock-order deadlock)', async () => {
    const user = await signUp(open.app);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        post(open.app, '/auth/login', user.ip).send({ email: user.email, password: user.password }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
  });
});
