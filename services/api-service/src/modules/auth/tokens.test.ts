import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AppError, createAccessTokenVerifier } from '@hwp/platform';
import request from 'supertest';
import { type ApiTestService, as, signUp, startApi, type TestUser } from '#test/api-test-kit';

/**
 * Acceptance of the access token (issue criteria 6 and 8): another host verifies it from the JWKS
 * alone, and no forged, altered or expired token is accepted, by the API host or by that verifier.
 */

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function decodePart(token: string, part: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[part], 'base64url').toString('utf8'));
}

/** A compact JWS made by hand: the forgeries below are exactly what an attacker could send. */
function jws(header: Record<string, unknown>, payload: Record<string, unknown>, key?: KeyObject | string) {
  const input = `${b64(header)}.${b64(payload)}`;
  let signature = Buffer.alloc(0);
  if (header.alg === 'RS256') signature = sign('sha256', Buffer.from(input), key as KeyObject);
  if (header.alg === 'HS256')
    signature = createHmac('sha256', key as string)
      .update(input)
      .digest();
  return `${input}.${signature.toString('base64url')}`;
}

function listen(api: ApiTestService): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(api.app).listen(0, '127.0.0.1', () => resolve(server));
  });
}

function jwksUrl(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
}

/** The key the API host generated in its data folder (no JWT_PRIVATE_KEY configured). */
function generatedKey(api: ApiTestService): KeyObject {
  const path = join(api.deps.config.DATA_DIR, 'api-service', 'jwt-signing-key.pem');
  return createPrivateKey(readFileSync(path, 'utf8'));
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let api: ApiTestService;
/** A second API host after a key rotation: a new signing key, the first one's public key still accepted. */
let rotated: ApiTestService;
let apiServer: Server;
let rotatedServer: Server;
let apiKey: KeyObject;
let apiKid: string;
let newKey: KeyObject;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  api = await startApi({ JWT_PRIVATE_KEY: undefined });
  apiKey = generatedKey(api);
  newKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  [rotated, apiServer, alice, bob] = await Promise.all([
    startApi({
      JWT_PRIVATE_KEY: newKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      JWT_PREVIOUS_PUBLIC_KEYS: createPublicKey(apiKey).export({ format: 'pem', type: 'spki' }).toString(),
    }),
    listen(api),
    signUp(api.app),
    signUp(api.app),
  ]);
  rotatedServer = await listen(rotated);
  apiKid = decodePart(alice.token, 0).kid as string;
}, 60_000);

afterAll(async () => {
  apiServer?.closeAllConnections();
  rotatedServer?.closeAllConnections();
  apiServer?.close();
  rotatedServer?.close();
  await Promise.all([api?.stop(), rotated?.stop()]);
});

const verifierOf = (server: Server) =>
  createAccessTokenVerifier({ jwksUrl: jwksUrl(server), issuer: 'hwp-api', audience: 'authenticated' });

async function verifierFailure(server: Server, token: string): Promise<AppError> {
  const outcome = await verifierOf(server)
    .verify(token)
    .then(
      () => new Error('the verifier accepted the token'),
      (error: unknown) => error,
    );
  if (!(outcome instanceof AppError)) throw outcome;
  return outcome;
}

describe('verification by another host from the JWKS alone', () => {
  test('the JWKS serves only public signing keys, cacheably', async () => {
    const res = await request(api.app).get('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(res.body.keys).toEqual([
      { kty: 'RSA', kid: apiKid, use: 'sig', alg: 'RS256', n: expect.any(String), e: 'AQAB' },
    ]);
  });

  test('a signed-up user’s access token verifies and names the user and the session', async () => {
    const claims = decodePart(alice.token, 1);
    const verified = await verifierOf(apiServer).verify(alice.token);
    expect(verified).toMatchObject({
      userId: alice.user.id,
      sessionId: claims.session_id,
      email: alice.email,
      phone: '',
      claims: expect.objectContaining({ role: 'authenticated', aud: 'authenticated', iss: 'hwp-api' }),
    });
    expect(verified.sessionId).toEqual(expect.any(String));
    expect(verified.expiresAt.getTime()).toBe(alice.session.expires_at * 1000);
  });
});

describe('forged and invalid access tokens', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const genuineClaims = () => decodePart(alice.token, 1);
  const withApiKey = (overrides: Record<string, unknown>) =>
    jws({ alg: 'RS256', typ: 'JWT', kid: apiKid }, { ...genuineClaims(), ...overrides }, apiKey);
  const otherKey = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const publicPem = () => createPublicKey(apiKey).export({ format: 'pem', type: 'spki' }).toString();

  test('control: a token this test signs with the API host’s own key is accepted by both', async () => {
    const token = withApiKey({ iat: now(), exp: now() + 600 });
    await as(api.app, { token, ip: alice.ip })
      .get('/profile')
      .expect(200)
      .expect((res) => expect(res.body.id).toBe(alice.user.id));
    await expect(verifierOf(apiServer).verify(token)).resolves.toMatchObject({ userId: alice.user.id });
  });

  const cases: [string, () => string, 'unauthorized' | 'token_expired'][] = [
    [
      'alg none with an empty signature',
      () => jws({ alg: 'none', typ: 'JWT' }, genuineClaims()),
      'unauthorized',
    ],
    [
      'alg none under the genuine kid',
      () => jws({ alg: 'none', typ: 'JWT', kid: apiKid }, genuineClaims()),
      'unauthorized',
    ],
    [
      'signed with another RSA key under the genuine kid',
      () => jws({ alg: 'RS256', typ: 'JWT', kid: apiKid }, genuineClaims(), otherKey()),
      'unauthorized',
    ],
    [
      'signed with another RSA key under its own kid',
      () => jws({ alg: 'RS256', typ: 'JWT', kid: 'attacker-key' }, genuineClaims(), otherKey()),
      'unauthorized',
    ],
    [
      'a tampered payload (sub changed to another user, signature kept)',
      () => {
        const [header, , signature] = alice.token.split('.');
        return `${header}.${b64({ ...genuineClaims(), sub: bob.user.id })}.${signature}`;
      },
      'unauthorized',
    ],
    [
      'expired, signed with the API host’s key',
      () => withApiKey({ iat: now() - 7200, exp: now() - 60 }),
      'token_expired',
    ],
    ['the wrong audience', () => withApiKey({ aud: 'service_role' }), 'unauthorized'],
    [
      'no exp claim (a token that never expires), signed with the API host’s key',
      () => withApiKey({ exp: undefined }),
      'unauthorized',
    ],
    ['the wrong issuer', () => withApiKey({ iss: 'https://evil.example' }), 'unauthorized'],
    [
      'HS256 keyed with the public key (key confusion)',
      () => jws({ alg: 'HS256', typ: 'JWT', kid: apiKid }, genuineClaims(), publicPem()),
      'unauthorized',
    ],
  ];

  test.each(cases)('%s: 401 from the API host, every time', async (_name, make, code) => {
    const token = make();
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await as(api.app, { token, ip: alice.ip }).get('/profile');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        detail: expect.any(String),
        code,
        path: '/profile',
        timestamp: expect.stringMatching(ISO),
      });
    }
  });

  test('a genuine signature over another user’s sub with this session_id: 401 (the session names its user)', async () => {
    const token = withApiKey({ sub: bob.user.id, exp: now() + 600 });
    const res = await as(api.app, { token, ip: alice.ip }).get('/profile');
    expect(res.status).toBe(401);
  });

  test.each(cases)('%s: refused by the JWKS verifier', async (_name, make, code) => {
    const error = await verifierFailure(apiServer, make());
    expect(error).toMatchObject({ status: 401, code });
  });
});

describe('key rotation', () => {
  test('the JWKS lists the new key and the previous one', async () => {
    const res = await request(rotated.app).get('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    const kids = (res.body.keys as { kid: string }[]).map((k) => k.kid);
    expect(kids).toHaveLength(2);
    expect(kids).toContain(apiKid);
  });

  test('tokens of the previous key still verify, on the rotated host and by the JWKS verifier', async () => {
    const carol = await signUp(rotated.app);
    expect(decodePart(carol.token, 0).kid).not.toBe(apiKid);
    // The same session, signed the way the host signed before the rotation.
    const beforeRotation = jws({ alg: 'RS256', typ: 'JWT', kid: apiKid }, decodePart(carol.token, 1), apiKey);
    await as(rotated.app, { token: beforeRotation, ip: carol.ip }).get('/profile').expect(200);

    const verifier = verifierOf(rotatedServer);
    await expect(verifier.verify(alice.token)).resolves.toMatchObject({ userId: alice.user.id });
    await expect(verifier.verify(carol.token)).resolves.toMatchObject({ userId: carol.user.id });
  });
});
