import { expectEventually } from '@hwp/platform/test-kit';
import request from 'supertest';
import {
  type ApiTestService,
  as,
  codeIn,
  latestMessage,
  linkIn,
  newClientIp,
  uniqueEmail,
  uniquePhone,
} from '#test/api-test-kit';
import {
  expectAuthResponse,
  PASSWORD,
  post,
  startConfirmingApi,
  startOpenApi,
  withClockMovedOn,
} from '#test/auth-test-setup';

/** Signup must be confirmed with the emailed code. */
let api: ApiTestService;
/** Signup confirms at once; expiry windows are the production defaults (withClockMovedOn). */
let open: ApiTestService;

beforeAll(async () => {
  [api, open] = await Promise.all([startConfirmingApi(), startOpenApi()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([api?.stop(), open?.stop()]);
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

describe('a password nobody proved', () => {
  const attackerPassword = 'set by someone else 1234';

  test("an unconfirmed signup's password does not survive the owner's magic-link sign-in", async () => {
    const email = uniqueEmail('pre-hijack');
    await post(api.app, '/auth/signup').send({ email, password: attackerPassword }).expect(200);
    await post(api.app, '/auth/magic-link').send({ email }).expect(200);
    const code = codeIn(await latestMessage(api.app, email, 'magiclink'));
    await post(api.app, '/auth/verify').send({ type: 'magiclink', email, token: code }).expect(200);
    const login = await post(api.app, '/auth/login').send({ email, password: attackerPassword });
    expect(login.status).toBe(400);
    expect(login.body.code).toBe('invalid_credentials');
  });

  test("an unconfirmed phone signup's password does not survive the owner's SMS sign-in", async () => {
    const phone = uniquePhone();
    await post(api.app, '/auth/signup').send({ phone, password: attackerPassword }).expect(200);
    const signupCode = codeIn(await latestMessage(api.app, phone, 'phone_otp'));
    // The owner asks for a sign-in code later (past the resend interval of the signup's code).
    await api.deps.dataSource.query(
      "UPDATE one_time_codes SET created_at = created_at - interval '5 minutes' WHERE recipient = $1",
      [phone],
    );
    await post(api.app, '/auth/phone-otp').send({ phone_number: phone }).expect(200);
    const token = await expectEventually(async () => {
      const code = codeIn(await latestMessage(api.app, phone, 'phone_otp'));
      expect(code).not.toBe(signupCode);
      return code;
    });
    await post(api.app, '/auth/verify-phone-otp').send({ phone_number: phone, token }).expect(200);
    const login = await post(api.app, '/auth/phone-login').send({
      phone_number: phone,
      password: attackerPassword,
    });
    expect(login.status).toBe(400);
  });

  test('a signup confirmed with its own code keeps its password, by email and by phone', async () => {
    const email = uniqueEmail('own-code');
    await post(api.app, '/auth/signup').send({ email, password: PASSWORD }).expect(200);
    const emailCode = codeIn(await latestMessage(api.app, email, 'signup'));
    await post(api.app, '/auth/verify').send({ type: 'signup', email, token: emailCode }).expect(200);
    await post(api.app, '/auth/login').send({ email, password: PASSWORD }).expect(200);

    const phone = uniquePhone();
    await post(api.app, '/auth/signup').send({ phone, password: PASSWORD }).expect(200);
    const smsCode = codeIn(await latestMessage(api.app, phone, 'phone_otp'));
    await post(api.app, '/auth/verify').send({ type: 'sms', phone, token: smsCode }).expect(200);
    await post(api.app, '/auth/phone-login').send({ phone_number: phone, password: PASSWORD }).expect(200);
  });
});
