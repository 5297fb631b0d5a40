import { createHmac, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../errors';
import { type AccessTokenVerifierOptions, createAccessTokenVerifier } from './jwks-verifier';

const ISSUER = 'hwp-api';
const AUDIENCE = 'authenticated';

interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function rsaKey(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, alg: 'RS256', privateKey, publicKey };
}

function ecKey(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, alg: 'ES256', privateKey, publicKey };
}

function jwk(key: SigningKey) {
  return { ...key.publicKey.export({ format: 'jwk' }), kid: key.kid, alg: key.alg, use: 'sig' };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS made by hand, so forgeries (alg none, HMAC with the public key) are possible. */
function token(header: Record<string, unknown>, payload: Record<string, unknown>, key?: KeyObject | string) {
  const input = `${b64(header)}.${b64(payload)}`;
  let signature = Buffer.alloc(0);
  if (header.alg === 'RS256') signature = sign('sha256', Buffer.from(input), key as KeyObject);
  if (header.alg === 'ES256') {
    signature = sign('sha256', Buffer.from(input), { key: key as KeyObject, dsaEncoding: 'ieee-p1363' });
  }
  if (header.alg === 'HS256')
    signature = createHmac('sha256', key as string)
      .update(input)
      .digest();
  return `${input}.${signature.toString('base64url')}`;
}

function claims(overrides: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: 'user-1',
    aud: AUDIENCE,
    role: 'authenticated',
    email: 'ada@example.test',
    phone: '',
    session_id: 'session-1',
    iat: now,
    exp: now + 3600,
    iss: ISSUER,
    ...overrides,
  };
}

function signed(key: SigningKey, overrides: Record<string, unknown> = {}) {
  return token({ alg: key.alg, typ: 'JWT', kid: key.kid }, claims(overrides), key.privateKey);
}

/** A JWKS endpoint whose key list and status the test changes; counts fetches. */
class JwksServer {
  keys: SigningKey[] = [];
  status = 200;
  hang = false;
  fetches = 0;
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((_req, res) => {
      this.fetches++;
      if (this.hang) return;
      res.writeHead(this.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: this.keys.map(jwk) }));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw error;
  return error;
}

describe('createAccessTokenVerifier', () => {
  const rsa = rsaKey('rsa-1');
  const ec = ecKey('ec-1');
  const jwks = new JwksServer();
  let url: string;
  const verifier = (options: Partial<AccessTokenVerifierOptions> = {}) =>
    createAccessTokenVerifier({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE, ...options });

  beforeAll(async () => {
    url = await jwks.start();
  });
  beforeEach(() => {
    jwks.keys = [rsa, ec];
    jwks.status = 200;
    jwks.hang = false;
    jwks.fetches = 0;
  });
  afterAll(() => jwks.stop());

  it('names the user and session of a token signed with a key of the set (RS256 and ES256)', async () => {
    const v = verifier();
    const exp = claims().exp as number;
    const verified = await v.verify(signed(rsa, { exp }));
    expect(verified).toMatchObject({
      userId: 'user-1',
      sessionId: 'session-1',
      email: 'ada@example.test',
      phone: '',
      claims: expect.objectContaining({ role: 'authenticated', iss: ISSUER }),
    });
    expect(verified.expiresAt.getTime()).toBe(exp * 1000);
    await expect(v.verify(signed(ec, { sub: 'user-2' }))).resolves.toMatchObject({ userId: 'user-2' });
    expect(jwks.fetches).toBe(1);
  });

  it('answers token_expired for an expired but genuine token', async () => {
    const past = Math.floor(Date.now() / 1000) - 60;
    const error = await failure(verifier().verify(signed(rsa, { iat: past - 3600, exp: past })));
    expect(error).toMatchObject({ code: 'token_expired', status: 401 });
  });

  const publicPem = () => rsa.publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const forgeries: [string, () => string][] = [
    ['alg none', () => token({ alg: 'none', typ: 'JWT', kid: rsa.kid }, claims())],
    ['another key under a known kid', () => signed({ ...rsaKey(rsa.kid) })],
    ['an unknown kid', () => signed(rsaKey('rsa-unknown'))],
    [
      'a tampered payload',
      () => {
        const [header, , signature] = signed(rsa).split('.');
        return `${header}.${b64(claims({ sub: 'someone-else' }))}.${signature}`;
      },
    ],
    ['the wrong issuer', () => signed(rsa, { iss: 'evil' })],
    ['the wrong audience', () => signed(rsa, { aud: 'service_role' })],
    ['HS256 keyed with the public key', () => token({ alg: 'HS256', kid: rsa.kid }, claims(), publicPem())],
    ['no session_id', () => signed(rsa, { session_id: undefined })],
    ['no exp', () => signed(rsa, { exp: undefined })],
    ['an expired token of another key', () => signed(rsaKey(rsa.kid), { exp: 1 })],
    ['garbage', () => 'not.a.token'],
    ['an empty string', () => ''],
  ];
  it.each(forgeries)('refuses %s as unauthorized', async (_name, make) => {
    const error = await failure(verifier().verify(make()));
    expect(error).toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('refuses an algorithm outside the pinned list', async () => {
    const error = await failure(verifier({ algorithms: ['ES256'] }).verify(signed(rsa)));
    expect(error).toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('refetches the set for an unknown kid after the cooldown, so a rotated key is accepted', async () => {
    const v = verifier({ cooldownMs: 0 });
    await v.verify(signed(rsa));
    const next = rsaKey('rsa-2');
    jwks.keys = [next, rsa];
    await expect(v.verify(signed(next))).resolves.toMatchObject({ userId: 'user-1' });
    expect(jwks.fetches).toBe(2);
  });

  it('does not refetch for unknown kids within the cooldown', async () => {
    const v = verifier({ cooldownMs: 60_000 });
    await v.verify(signed(rsa));
    for (let i = 0; i < 3; i++) {
      const error = await failure(v.verify(signed(rsaKey(`forged-${i}`))));
      expect(error.code).toBe('unauthorized');
    }
    expect(jwks.fetches).toBe(1);
  });

  it('answers unavailable (503), not 401, when the key set cannot be fetched', async () => {
    jwks.status = 500;
    expect(await failure(verifier().verify(signed(rsa)))).toMatchObject({ code: 'unavailable', status: 503 });

    jwks.status = 200;
    jwks.hang = true;
    const slow = await failure(verifier({ timeoutMs: 200 }).verify(signed(rsa)));
    expect(slow).toMatchObject({ code: 'unavailable', status: 503 });

    const closed = createAccessTokenVerifier({
      jwksUrl: 'http://127.0.0.1:9/.well-known/jwks.json',
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    expect(await failure(closed.verify(signed(rsa)))).toMatchObject({ code: 'unavailable', status: 503 });
  });
});
