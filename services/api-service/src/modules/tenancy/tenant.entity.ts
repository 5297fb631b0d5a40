import type { TenantRole } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column('text')
  slug: string;

  @Column('jsonb', { default: {} })
  settings: Record<string, unknown>;

  /** Created for a user who had no tenant (their personal one). */
  @Column('boolean', { default: false })
  personal: boolean;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** Membership of a user in a tenant. Tenant-owned: read and written through TenantScope only. */
@Entity({ name: 'tenant_members' })
export class TenantMemberEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column('text')
  role: TenantRole;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
