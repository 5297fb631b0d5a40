import { randomBytes } from 'node:crypto';
import * as argon2 from '@node-rs/argon2';
import {
  type ApiTestService,
  as,
  codeIn,
  latestMessage,
  newClientIp,
  signUp,
  uniqueEmail,
  uniquePhone,
} from '#test/api-test-kit';
import { expectAuthResponse, PASSWORD, post, startConfirmingApi, startOpenApi } from '#test/auth-test-setup';
import { expectSchema } from '#test/openapi-schemas';

// argon2's verify, still doing the real work, but recording which hashes it was asked to check.
jest.mock('@node-rs/argon2', () => {
  const actual = jest.requireActual<typeof import('@node-rs/argon2')>('@node-rs/argon2');
  return { ...actual, verify: jest.fn(actual.verify) };
});

/** Signup must be confirmed with the emailed code. */
let api: ApiTestService;
/** Signup confirms at once; the account-wide login ceiling is 8 failures. */
let open: ApiTestService;

beforeAll(async () => {
  [api, open] = await Promise.all([startConfirmingApi(), startOpenApi()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([api?.stop(), open?.stop()]);
});

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

  test('a burst of simultaneous wrong passwords from one address gets no more than 5 tries', async () => {
    const user = await signUp(open.app);
    const attacker = newClientIp();
    const burst = await Promise.all(
      Array.from({ length: 10 }, () =>
        post(open.app, '/auth/login', attacker).send({ email: user.email, password: 'wrong password' }),
      ),
    );
    expect(burst.map((res) => res.status).sort()).toEqual([400, 400, 400, 400, 400, 429, 429, 429, 429, 429]);
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
