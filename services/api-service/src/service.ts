import { defineService } from '@hwp/platform';
import type { ApiConfig } from './config';
import { authFeature } from './modules/auth/auth.feature';
import { filesFeature } from './modules/files/files.feature';
import { imagesFeature } from './modules/images/images.feature';
import { notificationsFeature } from './modules/notifications/notifications.feature';
import { realtimeFeature } from './modules/realtime/realtime.feature';
import { tenancyFeature } from './modules/tenancy/tenancy.feature';
import { tenantsFeature } from './modules/tenants/tenants.feature';

/**
 * The api-service as a list of features (each built once, in this order, after the features it
 * needs): for main.ts, the embedded runner and tests.
 */
export const apiService = defineService<ApiConfig>({
  name: 'api-service',
  blobRoutePrefix: '/blobs',
  opsPrefix: '/system',
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
  features: [
    notificationsFeature,
    tenancyFeature,
    authFeature,
    tenantsFeature,
    filesFeature,
    imagesFeature,
    realtimeFeature,
  ],
});
