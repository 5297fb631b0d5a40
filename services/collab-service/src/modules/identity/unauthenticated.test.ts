import { expectEventually } from '@hwp/platform/test-kit';
import request from 'supertest';
import { collabAs, newUser, type Stack, startStack } from '#test/collab-test-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ collab: { RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '10' } });
}, 60_000);
afterAll(() => stack?.stop());

test('requests to protected routes that end in 401 are limited per address; valid tokens are not', async () => {
  const probe = () => request(stack.collab.app).get('/v1/workspaces').set('X-Forwarded-For', '203.0.113.60');
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await probe()).status);
  expect(statuses).toEqual(Array(10).fill(401));
  // A failure is counted once its answer has gone out: the limit holds from the next request on.
  await expectEventually(async () => expect((await probe()).status).toBe(429), { timeoutMs: 10_000 });
  expect((await probe()).status).toBe(429);
  const user = await newUser(stack);
  for (let i = 0; i < 12; i++) {
    await collabAs(stack.collab.app, user).get('/v1/workspaces').expect(200);
  }
});
