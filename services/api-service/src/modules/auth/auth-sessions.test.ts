import request from 'supertest';
import { type ApiTestService, as, newClientIp, signUp } from '#test/api-test-kit';
import { expectAuthResponse, post, startOpenApi, withClockMovedOn } from '#test/auth-test-setup';
import { apiService } from '../../service';

/** Signup confirms at once; expiry windows are the production defaults (withClockMovedOn). */
let open: ApiTestService;

beforeAll(async () => {
  open = await startOpenApi();
}, 60_000);
afterAll(async () => {
  await open?.stop();
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

  test('the public list of ended sessions names a logged-out one and is rate limited per client', async () => {
    const user = await signUp(open.app);
    const claims = JSON.parse(Buffer.from(user.session.access_token.split('.')[1], 'base64url').toString());
    await as(open.app, user).post('/auth/logout').expect(204);
    const reader = newClientIp();
    const read = (ip: string) => request(open.app).get('/auth/sessions/revoked').set('X-Forwarded-For', ip);
    const list = await read(reader).expect(200);
    expect(list.body.items.map((item: { session_id: string }) => item.session_id)).toContain(
      claims.session_id,
    );
    for (let i = 1; i < 60; i++) await read(reader).expect(200);
    const over = await read(reader);
    expect([over.status, over.body.code]).toEqual([429, 'rate_limited']);
    await read(newClientIp()).expect(200);
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
