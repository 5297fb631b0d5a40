import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One way a user signs in: the email address or the phone number. */
@Entity({ name: 'identities' })
export class IdentityEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column('text')
  provider: 'email' | 'phone';

  /** The email (lowercased) or phone number. */
  @Column({ name: 'provider_id', type: 'text' })
  providerId: string;

  @Column({ name: 'last_sign_in_at', type: 'timestamptz', nullable: true })
  lastSignInAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
