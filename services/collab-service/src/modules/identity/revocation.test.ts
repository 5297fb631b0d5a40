import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectEventually } from '@hwp/platform/test-kit';
import type { Express } from 'express';
import request from 'supertest';
import {
  type CollabTestService,
  type CrossHostStack,
  collabAs,
  newUser,
  startCrossHostStack,
  type TestUser,
} from '#test/collab-test-kit';

let stack: CrossHostStack;
let replica: CollabTestService;
beforeAll(async () => {
  // Replicas share the session secret (as in production), so a cookie works on each of them.
  stack = await startCrossHostStack({
    collab: { SESSION_SECRET: 'revocation-test-session-secret-0123456789' },
  });
  replica = await stack.startCollabReplica();
}, 60_000);
afterAll(() => stack?.stop());

interface Session {
  token: string;
  refresh: string;
  /** A collaboration session cookie made from the token. */
  cookie: string;
}

/** Another sign-in of the same user: its own API host session, token and collaboration cookie. */
async function signIn(user: TestUser): Promise<Session> {
  const login = await request(stack.api.app)
    .post('/auth/login')
    .set('X-Forwarded-For', user.ip)
    .send({ email: user.email, password: user.password })
    .expect(200);
  const token = login.body.session.access_token as string;
  const exchange = await collabAs(stack.collab.app, { token }).post('/api/auth/session').expect(200);
  const raw = exchange.headers['set-cookie'] as unknown as string[];
  const cookie = raw.find((c) => c.startsWith('hwp.sid='))?.split(';')[0] as string;
  return { token, refresh: login.body.session.refresh_token, cookie };
}

function statusBy(app: Express, session: Session, via: 'token' | 'cookie'): Promise<number> {
  const req = request(app).get('/v1/workspaces');
  return (
    via === 'token' ? req.set('Authorization', `Bearer ${session.token}`) : req.set('Cookie', session.cookie)
  ).then((res) => res.status);
}

/**
 * Token and cookie refused on both replicas once the revocation has reached them over the broker
 * (and they were accepted before). The limit only stops a test that would wait forever; how long
 * the revocation takes (5 s at most, DECISIONS.md section 1) is measured by bench/revocation.
 */
async function expectRefused(session: Session): Promise<void> {
  await expectEventually(
    async () => {
      for (const app of [stack.collab.app, replica.app]) {
        expect(await statusBy(app, session, 'token')).toBe(401);
        expect(await statusBy(app, session, 'cookie')).toBe(401);
      }
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

async function expectAccepted(session: Session): Promise<void> {
  const statuses = [];
  for (const app of [stack.collab.app, replica.app]) {
    statuses.push(await statusBy(app, session, 'token'), await statusBy(app, session, 'cookie'));
  }
  expect(statuses).toEqual([200, 200, 200, 200]);
}

/**
 * The collaboration host verifies tokens from the JWKS alone; ended sessions reach it as
 * `session.revoked.v1` (every replica) and through `GET /auth/sessions/revoked` (a replica started
 * later catches up before it trusts a token).
 */
describe('ended API host sessions on the collaboration host', () => {
  const ended: Session[] = [];

  test('logout local ends that session only; logout others the rest; logout global (the default) all', async () => {
    const user = await newUser(stack);
    const [a, b, c] = [await signIn(user), await signIn(user), await signIn(user)];
    await expectAccepted(a);
    await collabAs(stack.api.app, { token: a.token }).post('/auth/logout?scope=local').expect(204);
    await expectRefused(a);
    await expectAccepted(b);

    await collabAs(stack.api.app, { token: b.token }).post('/auth/logout?scope=others').expect(204);
    await expectRefused(c);
    await expectAccepted(b);

    await collabAs(stack.api.app, { token: b.token }).post('/auth/logout').expect(204);
    await expectRefused(b);
    // The interface's answer for a session that ended: no user, and the stale cookie is cleared.
    const session = await request(stack.collab.app).get('/api/session').set('Cookie', b.cookie).expect(200);
    expect(session.body).toEqual({ user: null });
    const cleared = (session.headers['set-cookie'] as unknown as string[]) ?? [];
    expect(cleared.some((c) => c.startsWith('hwp.sid=;') && /Expires=Thu, 01 Jan 1970/.test(c))).toBe(true);
    ended.push(a, b, c);
  });

  test('reusing a rotated refresh token ends the session everywhere', async () => {
    const user = await newUser(stack);
    const s = await signIn(user);
    const first = await request(stack.api.app)
      .post('/auth/refresh')
      .send({ refresh_token: s.refresh })
      .expect(200);
    await request(stack.api.app)
      .post('/auth/refresh')
      .send({ refresh_token: first.body.session.refresh_token })
      .expect(200);
    await request(stack.api.app).post('/auth/refresh').send({ refresh_token: s.refresh }).expect(401);
    await expectRefused(s);
    ended.push(s);
  });

  test('a password change ends the other sessions', async () => {
    const user = await newUser(stack);
    const [keep, other] = [await signIn(user), await signIn(user)];
    await collabAs(stack.api.app, { token: keep.token })
      .put('/auth/user')
      .send({ password: 'a brand new password' })
      .expect(200);
    await expectRefused(other);
    await expectAccepted(keep);
    ended.push(other);
  });

  test('a replica started after the revocations refuses those tokens from its first request', async () => {
    const late = await stack.startCollabReplica();
    for (const session of ended) {
      expect(await statusBy(late.app, session, 'token')).toBe(401);
      expect(await statusBy(late.app, session, 'cookie')).toBe(401);
    }
    const fresh = await signIn(await newUser(stack));
    expect(await statusBy(late.app, fresh, 'token')).toBe(200);
  });

  test('a host started before the API host reads the list as soon as the API host answers, with no warning meanwhile', async () => {
    // An address where the API host is not listening yet (as when the embedded runner starts both).
    const placeholder = createServer().listen(0, '127.0.0.1');
    await once(placeholder, 'listening');
    const { port } = placeholder.address() as AddressInfo;
    await new Promise((resolve) => placeholder.close(resolve));
    const early = await stack.startCollabReplica({
      AUTH_REVOCATIONS_URL: `http://127.0.0.1:${port}/auth/sessions/revoked`,
      AUTH_REVOCATIONS_REFRESH_MS: '60000',
    });
    const fresh = await signIn(await newUser(stack));
    // No token is trusted before the list has been read once.
    expect(await statusBy(early.app, fresh, 'token')).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const api = createServer(stack.api.app).listen(port, '127.0.0.1');
    try {
      // Read by the host's own retries, not by a request (the refresh interval is a minute).
      await expectEventually(
        () => expect(early.logs.some((l) => l.msg === 'session revocations loaded')).toBe(true),
        { timeoutMs: 10_000 },
      );
      expect(await statusBy(early.app, fresh, 'token')).toBe(200);
    } finally {
      api.close();
    }
    expect(early.logs.filter((l) => l.msg === 'reading session revocations failed')).toEqual([]);
  });

  test('the API host lists ended sessions until their last token has expired', async () => {
    const res = await request(stack.api.app).get('/auth/sessions/revoked').expect(200);
    expect(res.body.items.length).toBeGreaterThanOrEqual(ended.length);
    for (const item of res.body.items) expect(Date.parse(item.expires_at)).toBeGreaterThan(Date.now());
  });
});
