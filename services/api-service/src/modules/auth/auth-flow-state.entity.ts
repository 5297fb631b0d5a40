import type { VerifyType } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A PKCE flow (GoTrue's flow state): started when a client sends a code challenge with a signup,
 * OTP or recovery request, keyed first by the emailed link's token; when the link is opened it
 * holds the one-time auth code instead, which `POST /auth/v1/token?grant_type=pkce` exchanges for a
 * session with the verifier.
 */
@Entity({ name: 'auth_flow_states' })
export class AuthFlowStateEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  /** What the emailed link was for (it decides how the session is reported: recovery or sign-in). */
  @Column('text')
  purpose: VerifyType;

  /** SHA-256 of the emailed link's token; null once the link is opened. */
  @Column({ name: 'link_hash', type: 'bytea', nullable: true })
  linkHash: Buffer | null;

  /** SHA-256 of the auth code handed to the client's redirect; null until the link is opened. */
  @Column({ name: 'auth_code_hash', type: 'bytea', nullable: true })
  authCodeHash: Buffer | null;

  @Column({ name: 'code_challenge', type: 'text' })
  codeChallenge: string;

  @Column({ name: 'code_challenge_method', type: 'text' })
  codeChallengeMethod: 's256' | 'plain';

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
