import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import { CreateTenantInvitations1764800000000 } from './migrations/1764800000000-CreateTenantInvitations';
import { TenantEntity, TenantMemberEntity } from './tenant.entity';
import { TenantInvitationEntity } from './tenant-invitation.entity';
import { TenantsService } from './tenants.service';

export interface TenancyExports {
  tenants: TenantsService;
}

/** Tenants, memberships and invitations (the first two tables are created by the auth feature's first migration). */
export const tenancyFeature = defineFeature<ApiConfig, TenancyExports>({
  name: 'tenancy',
  entities: [TenantEntity, TenantMemberEntity, TenantInvitationEntity],
  migrations: [CreateTenantInvitations1764800000000],
  build: (deps) => ({ exports: { tenants: new TenantsService(deps.dataSource, deps.bus) } }),
});
