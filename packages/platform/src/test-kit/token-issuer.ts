import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  sign,
} from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthResponse, User } from '@hwp/contracts';
import { newClientIp, type TestUser, uniqueEmail } from './users';

/**
 * The API host's side of a collaboration host's trust, for tests of the collaboration host alone:
 * an RS256 key whose JWKS and (empty) list of ended sessions are served where the API host serves
 * them, and access tokens signed with the API host's claims (issuer `hwp-api`, audience
 * `authenticated`, a session id). Booting the API host only to sign users up cost every collaboration
 * test file a second service; tests across the two hosts still start both.
 */
export interface TokenIssuer {
  /** For AUTH_JWKS_URL; the ended-sessions list is served beside it (`/auth/sessions/revoked`). */
  jwksUrl: string;
  /** A new user with a fresh access token, shaped as `signUp` answers. */
  user(data?: Record<string, string>): TestUser;
  close(): Promise<void>;
}

const TOKEN_SECONDS = 3600;

/** The run's key (made once by jest's global setup, HWP_TEST_ISSUER_KEY), else a new one. */
function issuerKey() {
  const pem = process.env.HWP_TEST_ISSUER_KEY;
  if (!pem) return generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

export async function startTokenIssuer(issuer = 'hwp-api', audience = 'authenticated'): Promise<TokenIssuer> {
  const { privateKey, publicKey } = issuerKey();
  const kid = randomBytes(8).toString('hex');
  const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] };
  const server = createServer((req, res) => {
    const body =
      req.url?.split('?')[0] === '/auth/sessions/revoked'
        ? { items: [], as_of: new Date().toISOString() }
        : jwks;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  return {
    jwksUrl: `${base}/.well-known/jwks.json`,
    user(data = {}) {
      const id = randomUUID();
      const email = uniqueEmail();
      const iat = Math.floor(Date.now() / 1000);
      const claims = {
        sub: id,
        aud: audience,
        role: 'authenticated',
        email,
        phone: '',
        session_id: randomUUID(),
        iat,
        exp: iat + TOKEN_SECONDS,
        iss: issuer,
      };
      const unsigned = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64(claims)}`;
      const token = `${unsigned}.${sign('sha256', Buffer.from(unsigned), privateKey).toString('base64url')}`;
      const now = new Date(iat * 1000).toISOString();
      const user = {
        id,
        aud: audience,
        role: 'authenticated',
        email,
        email_confirmed_at: now,
        phone: '',
        phone_confirmed_at: null,
        confirmed_at: now,
        last_sign_in_at: now,
        app_metadata: { provider: 'email', providers: ['email'] },
        user_metadata: { ...data },
        identities: [],
        created_at: now,
        updated_at: now,
        is_anonymous: false,
      } as unknown as User;
      const session: AuthResponse['session'] = {
        access_token: token,
        refresh_token: '',
        expires_in: TOKEN_SECONDS,
        expires_at: iat + TOKEN_SECONDS,
        token_type: 'bearer',
      };
      return { user, session, email, password: '', ip: newClientIp(), token };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
