import type { VerifyType } from '@hwp/contracts';
import { AppError, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import { OneTimeCodeEntity } from './one-time-code.entity';
import { codeHash, randomCode, randomToken, sameHash, sha256 } from './tokens';

export interface CodeSettings {
  secret: string;
  ttlSeconds: number;
  maxAttempts: number;
  resendIntervalSeconds: number;
}

export interface IssuedCode {
  code: string;
  /** Carried by the emailed link; null for SMS codes. */
  linkToken: string | null;
}

/** What a redemption attempt came to; failures are returned (not thrown) so the attempt count commits. */
export type Redemption =
  | { ok: true; userId: string; redirectTo: string | null; confirmsSignup: boolean }
  | { ok: false; error: AppError };

const expired = () =>
  new AppError('otp_expired', 'The code has expired or is no longer valid; request a new one');
const invalid = () => new AppError('otp_invalid', 'The code is wrong');

/**
 * One-time codes (magic link, signup confirmation, recovery, SMS): 6 digits from a secure random
 * source, stored as a keyed hash with expiry and an attempt counter, single use, one live code per
 * purpose and address. Links carry a separate 256-bit token.
 */
export class CodesService {
  constructor(private readonly settings: CodeSettings) {}

  /**
   * Issues a code, replacing the previous one. Throws 429 when the previous one is younger than the
   * resend interval. `userId` null: the address has no account; the code is stored (so resends are
   * throttled the same) but can never be redeemed.
   */
  async issue(
    manager: EntityManager,
    input: {
      purpose: VerifyType;
      recipient: string;
      userId: string | null;
      redirectTo?: string | null;
      /** Sent by a signup (or its resend): redeeming it keeps the password that signup set. */
      confirmsSignup?: boolean;
    },
  ): Promise<IssuedCode> {
    const { secret, ttlSeconds, resendIntervalSeconds } = this.settings;
    const code = randomCode();
    const linkToken = input.purpose === 'sms' ? null : randomToken();
    // The conditional upsert replaces an older code atomically; two racing requests cannot both win.
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO one_time_codes (id, user_id, purpose, recipient, code_hash, link_hash, redirect_to, attempts, expires_at, created_at, confirms_signup)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 0, now() + make_interval(secs => $8), now(), $10)
       ON CONFLICT (purpose, recipient) DO UPDATE SET
         id = EXCLUDED.id, user_id = EXCLUDED.user_id, code_hash = EXCLUDED.code_hash,
         link_hash = EXCLUDED.link_hash, redirect_to = EXCLUDED.redirect_to, attempts = 0,
         confirms_signup = EXCLUDED.confirms_signup,
         expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
       WHERE one_time_codes.created_at <= now() - make_interval(secs => $9)
       RETURNING id`,
      [
        newId(),
        input.userId,
        input.purpose,
        input.recipient,
        codeHash(secret, input.purpose, input.recipient, code),
        linkToken ? sha256(linkToken) : null,
        input.redirectTo ?? null,
        ttlSeconds,
        resendIntervalSeconds,
        input.confirmsSignup ?? false,
      ],
    );
    if (rows.length === 0) {
      const [{ wait }] = await manager.query(
        `SELECT GREATEST(1, CEIL(EXTRACT(EPOCH FROM (created_at + make_interval(secs => $3) - now()))))::int AS wait
         FROM one_time_codes WHERE purpose = $1 AND recipient = $2`,
        [input.purpose, input.recipient, resendIntervalSeconds],
      );
      throw new AppError('rate_limited', `A code was sent moments ago; ask again in ${wait} s`, {
        headers: { 'Retry-After': String(wait) },
      });
    }
    return { code, linkToken };
  }

  /** Redeems the 6-digit code sent to `recipient`. A wrong code counts an attempt. */
  async redeemCode(
    manager: EntityManager,
    purposes: readonly VerifyType[],
    recipient: string,
    code: string,
  ): Promise<Redemption> {
    const row = await manager
      .createQueryBuilder(OneTimeCodeEntity, 'c')
      .setLock('pessimistic_write')
      .where('c.recipient = :recipient AND c.purpose IN (:...purposes)', { recipient, purposes })
      .orderBy('c.created_at', 'DESC')
      .getOne();
    if (!row) return { ok: false, error: expired() };
    if (row.expiresAt.getTime() <= Date.now() || row.attempts >= this.settings.maxAttempts) {
      await manager.delete(OneTimeCodeEntity, { id: row.id });
      return { ok: false, error: expired() };
    }
    const matches = sameHash(row.codeHash, codeHash(this.settings.secret, row.purpose, recipient, code));
    if (!matches || !row.userId) {
      await manager.increment(OneTimeCodeEntity, { id: row.id }, 'attempts', 1);
      return { ok: false, error: invalid() };
    }
    await manager.delete(OneTimeCodeEntity, { id: row.id });
    return { ok: true, userId: row.userId, redirectTo: row.redirectTo, confirmsSignup: row.confirmsSignup };
  }

  /** Redeems the token of an emailed link (of one of `purposes`). */
  async redeemLink(
    manager: EntityManager,
    purposes: readonly VerifyType[],
    linkToken: string,
  ): Promise<Redemption> {
    const row = await manager
      .createQueryBuilder(OneTimeCodeEntity, 'c')
      .setLock('pessimistic_write')
      .where('c.link_hash = :hash AND c.purpose IN (:...purposes)', { hash: sha256(linkToken), purposes })
      .getOne();
    if (!row?.userId) return { ok: false, error: expired() };
    await manager.delete(OneTimeCodeEntity, { id: row.id });
    if (row.expiresAt.getTime() <= Date.now() || row.attempts >= this.settings.maxAttempts) {
      return { ok: false, error: expired() };
    }
    return { ok: true, userId: row.userId, redirectTo: row.redirectTo, confirmsSignup: row.confirmsSignup };
  }

  /** Drops codes that expired a day ago (housekeeping; expired codes are refused anyway). */
  async purgeExpired(manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM one_time_codes WHERE expires_at < now() - interval '1 day'`);
  }
}
