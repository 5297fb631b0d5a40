import {
  codeIn,
  expectEventually,
  listen,
  newClientIp,
  uniqueEmail,
  uniquePhone,
} from '@hwp/platform/test-kit';
import { GoTrueClient } from '@supabase/auth-js';
import request from 'supertest';
import { type ApiTestService, startApi } from '#test/api-test-kit';

/**
 * `POST /auth/resend` and `POST /auth/v1/resend` (auth-js `resend()`): a signup awaiting
 * confirmation gets a fresh code; every other address answers alike and gets nothing. Confirmation
 * on, with a one-second resend interval so a test can resend without waiting a minute.
 */
let service: ApiTestService;
let server: Awaited<ReturnType<typeof listen>>;
const PASSWORD = 'correct horse battery';
const INTERVAL_MS = 1_000;

beforeAll(async () => {
  service = await startApi({ AUTH_REQUIRE_CONFIRMATION: 'true', OTP_RESEND_INTERVAL_SECONDS: '1' });
  server = await listen(service.app);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await service?.stop();
});

const post = (path: string, ip = newClientIp()) => request(service.app).post(path).set('X-Forwarded-For', ip);
const pastInterval = () => new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 100));

async function messages(to: string, template: string): Promise<{ text: string }[]> {
  const res = await request(service.app).get('/dev/mailbox').query({ to }).expect(200);
  return (res.body.items as { template: string; text: string }[]).filter((m) => m.template === template);
}

/** Waits for the `count`-th message of a template to an address and returns its code. */
async function nthCode(to: string, template: string, count: number): Promise<string> {
  let code = '';
  await expectEventually(async () => {
    const found = await messages(to, template);
    expect(found).toHaveLength(count);
    code = codeIn(found[0]);
  });
  return code;
}

describe('resending a signup confirmation', () => {
  test('a pending email gets a fresh code that replaces the first; other addresses answer alike', async () => {
    const email = uniqueEmail('resend');
    await post('/auth/signup').send({ email, password: PASSWORD }).expect(200);
    const first = await nthCode(email, 'signup', 1);

    await pastInterval();
    const unknown = uniqueEmail('nobody');
    const [pending, nobody] = await Promise.all([
      post('/auth/resend').send({ type: 'signup', email }),
      post('/auth/resend').send({ type: 'signup', email: unknown }),
    ]);
    expect([pending.status, nobody.status]).toEqual([200, 200]);
    expect(pending.body).toEqual(nobody.body);
    expect(pending.body).toEqual({ message: expect.any(String) });
    const second = await nthCode(email, 'signup', 2);
    expect(await messages(unknown, 'signup')).toEqual([]);

    // Again at once: 429 for both, the same error.
    const [tooSoon, tooSoonUnknown] = await Promise.all([
      post('/auth/resend').send({ type: 'signup', email }),
      post('/auth/resend').send({ type: 'signup', email: unknown }),
    ]);
    expect([tooSoon.status, tooSoonUnknown.status]).toEqual([429, 429]);
    expect(tooSoon.body.code).toBe(tooSoonUnknown.body.code);

    // The first code is void; the resent one confirms the account.
    if (first !== second) {
      const stale = await post('/auth/verify').send({ type: 'signup', email, token: first });
      expect(stale.status).toBe(401);
    }
    const verified = await post('/auth/verify').send({ type: 'signup', email, token: second });
    expect(verified.status).toBe(200);
    expect(verified.body.user.email_confirmed_at).toEqual(expect.any(String));

    // Confirmed now: a resend sends nothing and answers as before.
    await pastInterval();
    const confirmed = await post('/auth/resend').send({ type: 'signup', email });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual(pending.body);
    await pastInterval();
    expect(await messages(email, 'signup')).toHaveLength(2);
  }, 30_000);

  test('bad combinations are 400 with the field named', async () => {
    const both = await post('/auth/resend').send({
      type: 'signup',
      email: uniqueEmail('x'),
      phone: uniquePhone(),
    });
    expect(both.status).toBe(400);
    const smsByEmail = await post('/auth/resend').send({ type: 'sms', email: uniqueEmail('x') });
    expect(smsByEmail.status).toBe(400);
    expect(smsByEmail.body.errors).toEqual([expect.objectContaining({ field: 'phone' })]);
    const unknownType = await post('/auth/resend').send({ type: 'recovery', email: uniqueEmail('x') });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.errors).toEqual([expect.objectContaining({ field: 'type' })]);
  });

  test('auth-js resend() by email and by phone, then verifyOtp with the resent code', async () => {
    const auth = new GoTrueClient({
      url: `${server.url}/auth/v1`,
      persistSession: false,
      autoRefreshToken: false,
      detectSessionInUrl: false,
    });
    const email = uniqueEmail('authjs-resend');
    const phone = uniquePhone();
    expect((await auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    expect((await auth.signUp({ phone, password: PASSWORD })).error).toBeNull();
    await nthCode(email, 'signup', 1);
    await nthCode(phone, 'phone_otp', 1);
    await pastInterval();

    expect((await auth.resend({ type: 'signup', email })).error).toBeNull();
    expect((await auth.resend({ type: 'sms', phone })).error).toBeNull();
    const emailCode = await nthCode(email, 'signup', 2);
    const phoneCode = await nthCode(phone, 'phone_otp', 2);

    const byEmail = await auth.verifyOtp({ email, token: emailCode, type: 'email' });
    expect(byEmail.error).toBeNull();
    expect(byEmail.data.user?.email).toBe(email);
    const byPhone = await auth.verifyOtp({ phone, token: phoneCode, type: 'sms' });
    expect(byPhone.error).toBeNull();
    expect(byPhone.data.session?.access_token).toEqual(expect.any(String));

    // No email or phone change is offered: nothing pending, the same empty success.
    expect((await auth.resend({ type: 'email_change', email: uniqueEmail('change') })).error).toBeNull();
  }, 30_000);
});
