import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import type { AuthModule } from '../auth/auth.module';
import { ProfileService } from './profile.service';
import type { TenancyExports } from './tenancy.feature';
import { createTenantResolver } from './tenant-context';
import { mountTenantRoutes } from './tenants.routes';

/** The tenant and profile routes: signed in, rate limited, then the tenant resolved (X-Tenant-ID). */
export const tenantsFeature = defineFeature<
  ApiConfig,
  { profiles: ProfileService },
  { tenancy: TenancyExports; accounts: AuthModule }
>({
  name: 'tenants',
  build: (deps, { tenancy, accounts }) => {
    const profiles = new ProfileService(deps.dataSource, deps.bus, accounts.auth, tenancy.tenants);
    const resolveTenant = createTenantResolver(deps.dataSource, tenancy.tenants);
    const signedIn = [accounts.authenticate, accounts.standardLimit, resolveTenant];
    return {
      routes: [(api) => mountTenantRoutes(api, { tenants: tenancy.tenants, profiles, signedIn })],
      exports: { profiles },
    };
  },
});
