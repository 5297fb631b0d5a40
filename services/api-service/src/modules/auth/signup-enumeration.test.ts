import request from 'supertest';
import {
  type ApiTestService,
  codeIn,
  latestMessage,
  newClientIp,
  startApi,
  uniqueEmail,
  uniquePhone,
} from '#test/api-test-kit';
import { expectSchema } from '#test/openapi-schemas';

const PASSWORD = 'correct horse battery';
const OTHER_PASSWORD = 'someone else entirely';

/** Confirmation on (the production default); `off` signs in at once. */
let api: ApiTestService;
let off: ApiTestService;

beforeAll(async () => {
  [api, off] = await Promise.all([startApi({ AUTH_REQUIRE_CONFIRMATION: 'true' }), startApi()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([api?.stop(), off?.stop()]);
});

const post = (app: ApiTestService['app'], path: string, ip = newClientIp()) =>
  request(app).post(path).set('X-Forwarded-For', ip);

/** The structure of a body: every key at every level, with the type of its value. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value === null) return null;
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  }
  return typeof value;
}

async function messagesTo(app: ApiTestService['app'], to: string): Promise<{ template: string }[]> {
  const res = await request(app).get('/dev/mailbox').query({ to });
  expect(res.status).toBe(200);
  return res.body.items;
}

/** Signs up on the confirming host and redeems the code the address received. */
async function confirmedAccount(channel: { email: string } | { phone: string }) {
  const ip = newClientIp();
  await post(api.app, '/auth/signup', ip)
    .send({ ...channel, password: PASSWORD, data: { first_name: 'Ada' } })
    .expect(200);
  const email = 'email' in channel;
  const to = email ? channel.email : channel.phone;
  const code = codeIn(await latestMessage(api.app, to, email ? 'signup' : 'phone_otp'));
  const verified = await post(api.app, '/auth/verify', ip)
    .send(email ? { type: 'signup', email: to, token: code } : { type: 'sms', phone: to, token: code })
    .expect(200);
  return { id: verified.body.user.id as string, ip };
}

describe('signup for an address that already has an account (no enumeration)', () => {
  test('a confirmed email: answered exactly as a new address, the account untouched, the owner mailed', async () => {
    const email = uniqueEmail('owner');
    const owner = await confirmedAccount({ email });

    const attempt = { password: OTHER_PASSWORD, data: { first_name: 'Eve' } };
    const fresh = await post(api.app, '/auth/signup').send({ email: uniqueEmail('fresh'), ...attempt });
    const again = await post(api.app, '/auth/signup').send({ email: email.toUpperCase(), ...attempt });
    expect([fresh.status, again.status]).toEqual([200, 200]);
    await expectSchema(api.app, 'SignupResponse', again.body);
    expect(shapeOf(again.body)).toEqual(shapeOf(fresh.body));
    const { id, identities, created_at, updated_at, ...rest } = again.body.user;
    expect(id).not.toBe(owner.id);
    expect(new Date(created_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(updated_at).toBe(created_at);
    expect(rest).toEqual({
      ...fresh.body.user,
      id: undefined,
      identities: undefined,
      created_at: undefined,
      updated_at: undefined,
      email,
    });
    expect(identities).toEqual([
      expect.objectContaining({
        provider: 'email',
        email,
        user_id: id,
        identity_data: { sub: id, email, email_verified: false, phone_verified: false },
      }),
    ]);
    expect(again.body.session).toBeNull();

    // The owner hears of it; no code that could take the account over was sent.
    const notice = await latestMessage(api.app, email, 'signup_attempt');
    expect(notice.subject).toBe('Someone tried to sign up with your email address');
    expect(notice.text).not.toMatch(/\b\d{6}\b/);
    const templates = (await messagesTo(api.app, email)).map((m) => m.template).sort();
    expect(templates).toEqual(['signup', 'signup_attempt']);

    // Nothing was written to the account: the old password and names stand, the new password fails.
    const login = await post(api.app, '/auth/login', owner.ip).send({ email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ id: owner.id, user_metadata: { first_name: 'Ada' } });
    const taken = await post(api.app, '/auth/login').send({ email, password: OTHER_PASSWORD });
    expect(taken.status).toBe(400);
    expect(taken.body.code).toBe('invalid_credentials');

    // A repeat within the resend interval answers 429 for both, as a new address's would.
    const freshRepeat = await post(api.app, '/auth/signup').send({
      email: fresh.body.user.email,
      ...attempt,
    });
    const repeat = await post(api.app, '/auth/signup').send({ email, ...attempt });
    expect([freshRepeat.status, repeat.status]).toEqual([429, 429]);
    expect(repeat.headers['retry-after']).toEqual(expect.any(String));
    const { timestamp: _a, ...freshError } = freshRepeat.body;
    const { timestamp: _b, ...repeatError } = repeat.body;
    expect(repeatError).toEqual(freshError);
  });

  test('a confirmed phone: answered exactly as a new number, the account untouched, the owner texted', async () => {
    const phone = uniquePhone();
    const owner = await confirmedAccount({ phone });

    const fresh = await post(api.app, '/auth/signup').send({
      phone: uniquePhone(),
      password: OTHER_PASSWORD,
    });
    const again = await post(api.app, '/auth/signup').send({ phone, password: OTHER_PASSWORD });
    expect([fresh.status, again.status]).toEqual([200, 200]);
    expect(shapeOf(again.body)).toEqual(shapeOf(fresh.body));
    expect(again.body.user).toMatchObject({
      phone,
      email: '',
      phone_confirmed_at: null,
      app_metadata: { provider: 'phone', providers: ['phone'] },
    });
    expect(again.body.user.id).not.toBe(owner.id);
    expect(again.body.session).toBeNull();

    const notice = await latestMessage(api.app, phone, 'signup_attempt');
    expect(notice.text).toMatch(/tried to sign up/);
    const login = await post(api.app, '/auth/phone-login', owner.ip).send({
      phone_number: phone,
      password: PASSWORD,
    });
    expect(login.status).toBe(200);
    expect(login.body.user.id).toBe(owner.id);
    const taken = await post(api.app, '/auth/phone-login').send({
      phone_number: phone,
      password: OTHER_PASSWORD,
    });
    expect(taken.status).toBe(400);
  });

  test('with confirmation off a signup signs in at once, so an existing address answers 409 as GoTrue does', async () => {
    const email = uniqueEmail('off');
    await post(off.app, '/auth/signup').send({ email, password: PASSWORD }).expect(200);
    const res = await post(off.app, '/auth/signup').send({ email, password: OTHER_PASSWORD });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('email_exists');

    const phone = uniquePhone();
    await post(off.app, '/auth/signup').send({ phone, password: PASSWORD }).expect(200);
    const byPhone = await post(off.app, '/auth/signup').send({ phone, password: OTHER_PASSWORD });
    expect(byPhone.status).toBe(409);
    expect(byPhone.body.code).toBe('phone_exists');
  });
});
