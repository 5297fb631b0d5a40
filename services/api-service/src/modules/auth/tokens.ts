import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { AccessTokenClaims } from '@hwp/contracts';
import jwt from 'jsonwebtoken';
import type { SigningKeys } from './signing-keys';

/** Refresh tokens and link tokens: 256 random bits, base64url. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** A 6-digit code from a secure random source. */
export function randomCode(): string {
  return randomInt(0, 1_000_000).toString().padStart(6, '0');
}

/**
 * Derives the successor of a refresh token. Only hashes are stored, yet a client that retries a
 * refresh inside the grace window must get the same successor back: recomputing it from the token
 * it presents (keyed with the server secret) gives exactly that.
 */
export function successorToken(secret: string, token: string): string {
  return createHmac('sha256', secret).update(`refresh-token:${token}`).digest('base64url');
}

/** Keyed hash of a one-time code, bound to its purpose and recipient. */
export function codeHash(secret: string, purpose: string, recipient: string, code: string): Buffer {
  return createHmac('sha256', secret).update(`otp:${purpose}:${recipient}:${code}`).digest();
}

export function sameHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface AccessTokenSubject {
  userId: string;
  sessionId: string;
  email: string | null;
  phone: string | null;
}

export class AccessTokenSigner {
  constructor(
    private readonly keys: SigningKeys,
    private readonly options: { issuer: string; audience: string; expiresInSeconds: number },
  ) {}

  get expiresInSeconds(): number {
    return this.options.expiresInSeconds;
  }

  sign(subject: AccessTokenSubject, now = Date.now()): { token: string; expiresAt: number } {
    const iat = Math.floor(now / 1000);
    const exp = iat + this.options.expiresInSeconds;
    const claims: AccessTokenClaims = {
      sub: subject.userId,
      aud: this.options.audience as 'authenticated',
      role: 'authenticated',
      email: subject.email ?? '',
      phone: subject.phone ?? '',
      session_id: subject.sessionId,
      iat,
      exp,
      iss: this.options.issuer,
    };
    const { signing } = this.keys;
    const token = jwt.sign(claims, signing.privateKey, { algorithm: signing.alg, keyid: signing.kid });
    return { token, expiresAt: exp };
  }
}
