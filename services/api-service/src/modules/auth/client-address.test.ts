import { expectEventually } from '@hwp/platform/test-kit';
import request from 'supertest';
import { type ApiTestService, startApi, uniqueEmail } from '#test/api-test-kit';

/** 60 failed logins, each claiming another address in X-Forwarded-For; how many were refused. */
async function spray(api: ApiTestService): Promise<number> {
  let limited = 0;
  for (let i = 0; i < 60; i++) {
    const res = await request(api.app)
      .post('/auth/login')
      .set('X-Forwarded-For', `198.51.100.${i + 1}`)
      .send({ email: uniqueEmail('spray'), password: 'wrong password' });
    if (res.status === 429) limited++;
    else expect(res.status).toBe(400);
  }
  return limited;
}

/**
 * The client address comes from the proxies named in TRUST_PROXY only. Without one, a rotating
 * X-Forwarded-For from a peer that is no trusted proxy is ignored: the spray counts against the peer's
 * own address like 60 attempts from one address (50 failures per address per window, then 429).
 */
describe('client address behind TRUST_PROXY', () => {
  let untrusting: ApiTestService;
  let behindGateway: ApiTestService;
  beforeAll(async () => {
    [untrusting, behindGateway] = await Promise.all([
      startApi({ TRUST_PROXY: '' }),
      startApi({ TRUST_PROXY: 'loopback' }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([untrusting?.stop(), behindGateway?.stop()]);
  });

  it('ignores X-Forwarded-For from an untrusted peer: a rotating spray is limited like one address', async () => {
    expect(await spray(untrusting)).toBe(10);
  }, 120_000);

  it('believes X-Forwarded-For from a trusted proxy: each claimed client has its own counter', async () => {
    expect(await spray(behindGateway)).toBe(0);
  }, 120_000);
});

describe('unauthenticated requests to protected routes', () => {
  let api: ApiTestService;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_STANDARD_PER_WINDOW: '20' });
  }, 60_000);
  afterAll(() => api?.stop());

  it('count against the address: past the limit of 401s it gets 429 before any token is checked', async () => {
    const probe = (i: number) =>
      request(api.app)
        .get('/profile')
        .set('X-Forwarded-For', '203.0.113.50')
        .set('Authorization', i % 2 ? 'Bearer not-a-token' : '');
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await probe(i)).status);
    expect(statuses).toEqual(Array(20).fill(401));
    // A failure is counted once its answer has gone out: the limit holds from the next request on
    // that sees the count.
    await expectEventually(async () => expect((await probe(0)).status).toBe(429), { timeoutMs: 10_000 });
    expect((await probe(1)).status).toBe(429);
    // Another address is not affected.
    const other = await request(api.app).get('/profile').set('X-Forwarded-For', '203.0.113.51');
    expect(other.status).toBe(401);
  });
});
