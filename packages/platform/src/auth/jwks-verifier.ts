import { hash } from 'node:crypto';
import { AppError, UnauthorizedError, UnavailableError } from '../errors';
import { ExpiringMap } from '../expiring-map';

// jose is ESM only, so its types are resolved as an ES module's; import types, since Biome does not
// parse the resolution-mode attribute on an `import type` declaration.
type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' }});
type JWTPayload = import('jose', { with: { 'resolution-mode': 'import' }}).JWTPayload;
type JWTVerifyGetKey = import('jose', { with: { 'resolution-mode': 'import' }}).JWTVerifyGetKey;

export type AccessTokenAlgorithm = 'RS256' | 'ES256';

export interface AccessTokenVerifierOptions {
  /** The issuer's key set, e.g. `http://api-service:3000/.well-known/jwks.json`. */
  jwksUrl: string;
  /** Expected `iss` (the API host's JWT_ISSUER). */
  issuer: string;
  /** Expected `aud` (the API host's JWT_AUDIENCE). */
  audience: string;
  /** Pinned algorithms; anything else (`none`, HS256, ...) is refused before a key is looked up. */
  algorithms?: AccessTokenAlgorithm[];
  /** How long fetched keys are used before the set is fetched again. Default 10 minutes. */
  cacheMaxAgeMs?: number;
  /** Minimum gap after a fetch before an unknown `kid` may trigger another one. Default 30 s. */
  cooldownMs?: number;
  /** Timeout of one key-set fetch. Default 5 s. */
  timeoutMs?: number;
  /** Verified tokens remembered (by hash, until they expire), so a token is verified once. Default 10,000. */
  cacheSize?: number;
}

/** An access token whose signature, algorithm, issuer, audience and lifetime were checked. */
export interface VerifiedAccessToken {
  userId: string;
  sessionId: string;
  /** '' when the account has none. */
  email: string;
  phone: string;
  expiresAt: Date;
  claims: Record<string, unknown>;
}

export interface AccessTokenVerifier {
  /**
   * Resolves with the token's subject, or throws `token_expired` (401) for an expired token,
   * `unauthorized` (401) for any other invalid token, and `unavailable` (503) when the key set
   * cannot be fetched.
   */
  verify(token: string): Promise<VerifiedAccessToken>;
}

let jose: Jose | undefined;

/**
 * jose 6 ships ESM only. Node >= 20.19 (the engines floor) loads it with require(), which keeps
 * this package CommonJS; loaded on first use, so importing the platform never pays for it.
 */
function loadJose(): Jose {
  jose ??= require('jose') as Jose;
  return jose;
}

/** Failures of the key lookup that are the token's fault: its `kid` names no key we serve. */
const TOKEN_KEY_FAULTS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS']);

function joseCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_J') ? code : undefined;
}

function requiredString(payload: JWTPayload, claim: string): string {
  const value = payload[claim];
  if (typeof value !== 'string' || value === '') {
    throw new UnauthorizedError(`Invalid access token: the ${claim} claim is missing`);
  }
  return value;
}

function optionalString(payload: JWTPayload, claim: string): string {
  const value = payload[claim];
  return typeof value === 'string' ? value : '';
}

/**
 * Verifies the API host's access tokens from its JWKS alone (no shared secret, no call per token).
 * Keys are cached; a token naming an unknown `kid` (the issuer rotated its key) refetches the set,
 * at most once per cooldown, so forged kids cannot hammer the issuer.
 */
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions): AccessTokenVerifier {
  const url = new URL(options.jwksUrl);
  const algorithms = options.algorithms ?? ['RS256', 'ES256'];
  let getKey: JWTVerifyGetKey | undefined;

  const keyResolver = (): JWTVerifyGetKey => {
    if (getKey) return getKey;
    const keySet = loadJose().createRemoteJWKSet(url, {
      cacheMaxAge: options.cacheMaxAgeMs ?? 600_000,
      cooldownDuration: options.cooldownMs ?? 30_000,
      timeoutDuration: options.timeoutMs ?? 5_000,
    });
    getKey = async (header, token) => {
      try {
        return await keySet(header, token);
      } catch (error) {
        const code = joseCode(error);
        if (code && TOKEN_KEY_FAULTS.has(code)) throw error;
        // Refused connection, timeout, non-200 answer, malformed set: the issuer's fault, not the
        // token's. A 401 here would make clients throw away good tokens.
        throw new UnavailableError('The access-token keys cannot be fetched from the issuer; try again', {
          cause: error,
          headers: { 'Retry-After': '5' },
        });
      }
    };
    return getKey;
  };

  // Verified tokens by their sha256, oldest first (a Map keeps insertion order). Only successes are
  // kept; revocation is checked by the caller on every request, so a cached token still ends with
  // its session.
  const verified = new ExpiringMap<string, VerifiedAccessToken>(options.cacheSize ?? 10_000);

  return {
    async verify(token) {
      const key = hash('sha256', token, 'base64url');
      const known = verified.get(key);
      if (known) return known;
      const result = await verifyOnce(token);
      return verified.set(key, result, result.expiresAt.getTime());
    },
  };

  async function verifyOnce(token: string): Promise<VerifiedAccessToken> {
    const { jwtVerify } = loadJose();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keyResolver(), {
        algorithms,
        issuer: options.issuer,
        audience: options.audience,
        requiredClaims: ['sub', 'exp', 'session_id'],
      }));
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (joseCode(error) === 'ERR_JWT_EXPIRED') {
        throw new AppError('token_expired', 'The access token has expired; refresh it');
      }
      throw new UnauthorizedError('Invalid access token');
    }
    return {
      userId: requiredString(payload, 'sub'),
      sessionId: requiredString(payload, 'session_id'),
      email: optionalString(payload, 'email'),
      phone: optionalString(payload, 'phone'),
      expiresAt: new Date((payload.exp as number) * 1000),
      claims: { ...payload },
    };
  }
}
