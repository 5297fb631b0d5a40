import type { VerifyType } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A live one-time code (magic link, signup confirmation, recovery, SMS); deleted when redeemed. */
@Entity({ name: 'one_time_codes' })
export class OneTimeCodeEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** Null when the address has no account: the code can never be redeemed, but resends are throttled alike. */
  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @Column('text')
  purpose: VerifyType;

  /** Lowercased email or E.164 phone. */
  @Column('text')
  recipient: string;

  /** HMAC of the 6-digit code (keyed, so a leaked table cannot be brute forced offline). */
  @Column({ name: 'code_hash', type: 'bytea' })
  codeHash: Buffer;

  /** SHA-256 of the long token carried by the emailed link. */
  @Column({ name: 'link_hash', type: 'bytea', nullable: true })
  linkHash: Buffer | null;

  @Column({ name: 'redirect_to', type: 'text', nullable: true })
  redirectTo: string | null;

  @Column('int', { default: 0 })
  attempts: number;

  /** Sent by the signup that set the account's password (see AddCodeConfirmsSignup1763800000400). */
  @Column({ name: 'confirms_signup', type: 'boolean', default: false })
  confirmsSignup: boolean;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
