import { defineService } from '@hwp/platform';
import type { CollabConfig } from './config';
import { bomsFeature } from './modules/boms/boms.feature';
import { eventsFeature } from './modules/events/events.feature';
import { identityFeature } from './modules/identity/identity.feature';
import { invitationsFeature } from './modules/invitations/invitations.feature';
import { partsFeature } from './modules/parts/parts.feature';
import { reviewsFeature } from './modules/reviews/reviews.feature';
import { sharedFilesFeature } from './modules/shared-files/shared-files.feature';
import { viewerFeature } from './modules/viewer/viewer.feature';
import { workspaceAccessFeature } from './modules/workspace-access/workspace-access.feature';
import { workspacesFeature } from './modules/workspaces/workspaces.feature';

/**
 * The collab-service as a list of features (each built once, in this order, after the features it
 * needs): for main.ts, the embedded runner and tests.
 */
export const collabService = defineService<CollabConfig>({
  name: 'collab-service',
  blobRoutePrefix: '/v1/blobs',
  opsPrefix: '/v1/system',
  openapi: {
    title: 'Hardware Engineering Platform: collaboration host',
    description:
      'Workspaces, parts, BOMs, files with optimistic concurrency, locks, reviews, tasks and the SSE stream.',
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'An access token of the API host (server-side integrations).',
      },
      workspaceApiKey: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'hwpk_<id>_<secret>',
        description:
          'A workspace API key (POST /v1/workspaces/{name}/api-keys): read-only, accepted by the operations marked x-api-key.',
      },
      sessionCookie: {
        type: 'apiKey',
        in: 'cookie',
        name: 'hwp.sid',
        description: 'Browser session from POST /api/auth/session.',
      },
    },
  },
  features: [
    identityFeature,
    workspaceAccessFeature,
    eventsFeature,
    workspacesFeature,
    invitationsFeature,
    partsFeature,
    bomsFeature,
    sharedFilesFeature,
    reviewsFeature,
    viewerFeature,
  ],
});
