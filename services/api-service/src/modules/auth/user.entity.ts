import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * `user_metadata` of section 2.1: a free JSON object (checked on input); the profile fields are
 * the ones this service reads.
 */
export interface UserMetadataFields {
  first_name?: string;
  last_name?: string;
  avatar_url?: string;
}

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** Lowercased; null for phone-only accounts. */
  @Column('text', { nullable: true })
  email: string | null;

  /** E.164; null for email-only accounts. */
  @Column('text', { nullable: true })
  phone: string | null;

  /** argon2id PHC string; null for passwordless accounts (magic link, phone OTP). */
  @Column({ name: 'encrypted_password', type: 'text', nullable: true })
  encryptedPassword: string | null;

  @Column({ name: 'email_confirmed_at', type: 'timestamptz', nullable: true })
  emailConfirmedAt: Date | null;

  @Column({ name: 'phone_confirmed_at', type: 'timestamptz', nullable: true })
  phoneConfirmedAt: Date | null;

  @Column({ name: 'last_sign_in_at', type: 'timestamptz', nullable: true })
  lastSignInAt: Date | null;

  @Column('text', { default: 'authenticated' })
  role: string;

  /** How the account was created. */
  @Column('text')
  provider: 'email' | 'phone';

  @Column({ name: 'user_metadata', type: 'jsonb', default: {} })
  userMetadata: UserMetadataFields;

  @Column({ name: 'default_tenant_id', type: 'uuid', nullable: true })
  defaultTenantId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
