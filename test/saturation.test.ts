import { as, newClientIp, signUp, uniqueEmail } from '@hwp/platform/test-kit';
import request from 'supertest';
import { type ApiTestService, startApi } from '#api-test/api-test-kit';

// Issue 34, finding 3: a saturated pool or an unreachable rate-limit store must not turn into 500s,
// and the limits that guard credentials must not let requests through unchecked.
let api: ApiTestService;
beforeAll(async () => {
  api = await startApi({ DB_POOL_SIZE: '3' });
}, 60_000);
afterAll(() => api?.stop());

test('with every pooled connection busy, requests answer 503 with Retry-After, then recover', async () => {
  const user = await signUp(api.app);
  const held = Array.from({ length: 3 }, () => api.deps.dataSource.query('SELECT pg_sleep(7)'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const busy = await as(api.app, user).get('/profile');
  expect([busy.status, busy.body.code]).toEqual([503, 'unavailable']);
  expect(busy.headers['retry-after']).toBe('2');
  await Promise.all(held);
  expect((await as(api.app, user).get('/profile')).status).toBe(200);
});

test('while the rate-limit store is unreachable, credential routes refuse (503) and others go on', async () => {
  const user = await signUp(api.app);
  await api.deps.dataSource.query('ALTER TABLE rate_limit_counters RENAME TO rate_limit_counters_away');
  try {
    const ip = newClientIp();
    const login = await request(api.app)
      .post('/auth/login')
      .set('X-Forwarded-For', ip)
      .send({ email: user.email, password: user.password });
    const signup = await request(api.app)
      .post('/auth/signup')
      .set('X-Forwarded-For', ip)
      .send({ email: uniqueEmail('closed'), password: 'correct horse battery' });
    const otp = await request(api.app)
      .post('/auth/magic-link')
      .set('X-Forwarded-For', ip)
      .send({ email: user.email });
    const gotrue = await request(api.app)
      .post('/auth/v1/token?grant_type=password')
      .set('X-Forwarded-For', ip)
      .send({ email: user.email, password: user.password });
    expect([login.status, signup.status, otp.status, gotrue.status]).toEqual([503, 503, 503, 503]);
    expect(login.headers['retry-after']).toBe('5');
    // A signed-in read is not a credential guess: its limit fails open.
    expect((await as(api.app, user).get('/profile')).status).toBe(200);
  } finally {
    await api.deps.dataSource.query('ALTER TABLE rate_limit_counters_away RENAME TO rate_limit_counters');
  }
  const again = await request(api.app)
    .post('/auth/login')
    .set('X-Forwarded-For', newClientIp())
    .send({ email: user.email, password: user.password });
  expect(again.status).toBe(200);
});
