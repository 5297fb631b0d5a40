import { expectEventually } from '@hwp/platform/test-kit';
import request from 'supertest';
import { type CrossHostStack, collabAs, newUser, startCrossHostStack } from '#test/collab-test-kit';

let stack: CrossHostStack;
beforeAll(async () => {
  stack = await startCrossHostStack();
}, 60_000);
afterAll(() => stack?.stop());

function cookieOf(res: request.Response, name = 'hwp.sid'): string {
  const raw = res.headers['set-cookie'] as unknown as string[] | undefined;
  const cookie = raw?.find((c) => c.startsWith(`${name}=`));
  if (!cookie) throw new Error(`no ${name} cookie`);
  return cookie;
}

describe('collaboration sessions', () => {
  test('a bearer token becomes a session cookie; the cookie works alone; logout ends it', async () => {
    const user = await newUser(stack);
    const exchange = await collabAs(stack.collab.app, user).post('/api/auth/session');
    expect(exchange.status).toBe(200);
    expect(exchange.body.user).toMatchObject({ id: user.user.id, email: user.email });
    expect(exchange.body.user.username).toMatch(/^user-[0-9a-f]+$/);
    const setCookie = cookieOf(exchange);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    const cookie = setCookie.split(';')[0];
    const csrf = decodeURIComponent(cookieOf(exchange, 'hwp.csrf').split(';')[0].slice('hwp.csrf='.length));

    const session = await request(stack.collab.app).get('/api/session').set('Cookie', cookie);
    expect(session.body.user).toMatchObject({ id: user.user.id });
    const created = await request(stack.collab.app)
      .post('/v1/workspaces')
      .set('Cookie', cookie)
      .set('X-CSRF-Token', csrf)
      .send({ name: `ws-${Date.now()}` });
    expect(created.status).toBe(201);
    expect(created.body.role).toBe('owner');

    // A second exchange rotates the session id.
    const again = await collabAs(stack.collab.app, user).post('/api/auth/session').set('Cookie', cookie);
    expect(cookieOf(again).split(';')[0]).not.toBe(cookie);

    const rotated = decodeURIComponent(cookieOf(again, 'hwp.csrf').split(';')[0].slice('hwp.csrf='.length));
    const againCookie = cookieOf(again).split(';')[0];
    await request(stack.collab.app).post('/api/auth/logout').set('Cookie', againCookie).expect(403);
    await request(stack.collab.app)
      .post('/api/auth/logout')
      .set('Cookie', againCookie)
      .set('X-CSRF-Token', rotated)
      .expect(204);
    await request(stack.collab.app).post('/api/auth/logout').set('Cookie', cookie).expect(204);
    const after = await request(stack.collab.app).get('/api/session').set('Cookie', cookie);
    expect(after.body).toEqual({ user: null });
    const denied = await request(stack.collab.app).get('/v1/workspaces').set('Cookie', cookie);
    expect(denied.status).toBe(401);
  });

  test('a forged or expired bearer token is 401 with the error body', async () => {
    const user = await newUser(stack);
    const [h, p] = user.token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: '00000000-0000-7000-8000-000000000000' })).toString('base64url')}.${user.token.split('.')[2]}`;
    const res = await collabAs(stack.collab.app, { token: forged }).get('/v1/workspaces');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthorized', path: '/v1/workspaces' });
    const none = await collabAs(stack.collab.app, { token: 'not-a-jwt' }).get('/v1/workspaces');
    expect(none.status).toBe(401);
    const anonymous = await request(stack.collab.app).get('/v1/workspaces');
    expect(anonymous.status).toBe(401);
  });

  test('config routes answer without login', async () => {
    expect((await request(stack.collab.app).get('/api/auth/config')).body).toEqual({
      requiresInvitation: false,
    });
    expect((await request(stack.collab.app).get('/v1/config')).body).toEqual({ branchSuffixWrites: true });
    expect((await request(stack.collab.app).get('/api/session')).body).toEqual({ user: null });
  });

  test('profile changes on the API host reach the collaboration user through user.updated.v1', async () => {
    const user = await newUser(stack);
    await collabAs(stack.collab.app, user).post('/api/auth/session').expect(200);
    await request(stack.api.app)
      .put('/profile')
      .set('Authorization', `Bearer ${user.token}`)
      .set('X-Forwarded-For', user.ip)
      .send({ first_name: 'Ada', last_name: 'Lovelace' })
      .expect(200);
    await expectEventually(async () => {
      const res = await collabAs(stack.collab.app, user).get('/api/session');
      expect(res.body.user.displayName).toBe('Ada Lovelace');
    });
  });
});
