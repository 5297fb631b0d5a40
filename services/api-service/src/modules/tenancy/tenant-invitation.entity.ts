import type { TenantRole } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An invitation to a tenant: an address, a role and the sha256 of the emailed token. Membership is
 * made only when the addressee accepts (signed in with that confirmed address). Tenant-owned: read
 * and written through TenantScope, except by the addressee's own routes, which find it by token or
 * by their address.
 */
@Entity({ name: 'tenant_invitations' })
export class TenantInvitationEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  /** Lowercase. */
  @Column('text')
  email: string;

  @Column('text')
  role: TenantRole;

  @Column({ name: 'token_hash', type: 'bytea' })
  tokenHash: Buffer;

  /** pending, accepted, declined or revoked (expired is derived from `expiresAt`). */
  @Column('text')
  status: 'pending' | 'accepted' | 'declined' | 'revoked';

  @Column({ name: 'invited_by', type: 'uuid', nullable: true })
  invitedBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'responded_at', type: 'timestamptz', nullable: true })
  respondedAt: Date | null;
}
