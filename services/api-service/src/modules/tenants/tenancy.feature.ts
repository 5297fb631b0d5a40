import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import { TenantEntity, TenantMemberEntity } from './tenant.entity';
import { TenantsService } from './tenants.service';

export interface TenancyExports {
  tenants: TenantsService;
}

/** Tenants and memberships (their tables are created by the accounts migration). */
export const tenancyFeature = defineFeature<ApiConfig, TenancyExports>({
  name: 'tenancy',
  entities: [TenantEntity, TenantMemberEntity],
  build: (deps) => ({ exports: { tenants: new TenantsService(deps.dataSource) } }),
});
