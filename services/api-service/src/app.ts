import { createServiceApp, type PlatformDeps } from '@hwp/platform';
import cookieParser from 'cookie-parser';
import type { Express } from 'express';
import type { ApiConfig } from './config';
import { createAuthModule } from './modules/auth/auth.module';
import { createNotificationsModule } from './modules/notifications';
import { ProfileService } from './modules/tenants/profile.service';
import { createTenantResolver } from './modules/tenants/tenant-context';
import { mountTenantRoutes } from './modules/tenants/tenants.routes';
import { TenantsService } from './modules/tenants/tenants.service';

/** Builds the api-service express app from its dependencies; it does not listen. */
export function createApp(deps: PlatformDeps<ApiConfig>): Express {
  const notifications = createNotificationsModule(deps);
  const tenants = new TenantsService(deps.dataSource);
  const accounts = createAuthModule(deps, tenants, notifications.request);
  const profiles = new ProfileService(deps.dataSource, deps.bus, accounts.auth, tenants);
  const resolveTenant = createTenantResolver(deps.dataSource, tenants);
  const signedIn = [accounts.authenticate, accounts.standardLimit, resolveTenant];

  return createServiceApp(deps, {
    openapi: {
      title: 'Hardware Engineering Platform: API host',
      description:
        'Authentication, tenants, files with revisions, CAD metadata, previews, AI image tools and WebSocket updates.',
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'Access token from the login routes. Browser clients may use the session cookies of `?cookie=true` instead; then state-changing requests need the `X-CSRF-Token` header.',
        },
      },
    },
    opsPrefix: '/system',
    mount: (api, app) => {
      app.use(cookieParser());
      accounts.mount(api);
      mountTenantRoutes(api, { tenants, profiles, signedIn });
      notifications.mount(api);
    },
  });
}
