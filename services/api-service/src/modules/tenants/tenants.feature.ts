import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import type { AuthModule } from '../auth/auth.module';
import type { NotificationsModule } from '../notifications/notifications.service';
import type { TenancyExports } from '../tenancy/tenancy.feature';
import { createTenantResolver } from '../tenancy/tenant-context';
import { ProfileService } from './profile.service';
import { TenantInvitationsService } from './tenant-invitations.service';
import { mountTenantRoutes } from './tenants.routes';

/** The tenant and profile routes: signed in, rate limited, then the tenant resolved (X-Tenant-ID). */
export const tenantsFeature = defineFeature<
  ApiConfig,
  { profiles: ProfileService },
  { tenancy: TenancyExports; auth: AuthModule; notifications: NotificationsModule }
>({
  name: 'tenants',
  build: (deps, { tenancy, auth, notifications }) => {
    const profiles = new ProfileService(deps.dataSource, deps.bus, auth.auth, tenancy.tenants);
    const invitations = new TenantInvitationsService(deps.dataSource, tenancy.tenants, {
      ttlMs: deps.config.TENANT_INVITATION_TTL_HOURS * 3_600_000,
      linkBase: auth.siteUrl,
      notify: notifications.request,
    });
    const resolveTenant = createTenantResolver(deps.dataSource, tenancy.tenants);
    const signedIn = [auth.authenticate, auth.standardLimit, resolveTenant];
    return {
      routes: [
        (api) => mountTenantRoutes(api, { tenants: tenancy.tenants, invitations, profiles, signedIn }),
      ],
      exports: { profiles },
    };
  },
});
