import { createServiceApp, type PlatformDeps } from '@hwp/platform';
import type { Express } from 'express';
import type { CollabConfig } from './config';
import { eventsModuleFor } from './modules/events/events.module';
import { identityModuleFor } from './modules/identity/identity.module';
import { mountInvitationRoutes } from './modules/invitations/invitations.routes';
import { mountPartRoutes } from './modules/parts/parts.routes';
import { createRoleCheck } from './modules/workspaces/workspace-access';
import type { CollabRouting } from './modules/workspaces/workspace-route';
import { mountWorkspaceRoutes } from './modules/workspaces/workspaces.routes';
import { WorkspacesService } from './modules/workspaces/workspaces.service';

/** Builds the collab-service express app from its dependencies; it does not listen. */
export function createApp(deps: PlatformDeps<CollabConfig>): Express {
  const identity = identityModuleFor(deps);
  const roles = createRoleCheck(deps.dataSource);
  const events = eventsModuleFor(deps);
  const workspaces = new WorkspacesService(deps.dataSource, events.events);

  return createServiceApp(deps, {
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
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'hwp.sid',
          description: 'Browser session from POST /api/auth/session.',
        },
      },
    },
    opsPrefix: '/v1/system',
    mount: (api, app) => {
      identity.install(app);
      const routing: CollabRouting = { api, requireUser: identity.requireUser, roles };
      identity.mount(api);
      mountWorkspaceRoutes({
        routing,
        workspaces,
        users: identity.users,
        presence: events.presence,
        blobs: deps.blobs,
        dataSource: deps.dataSource,
      });
      mountInvitationRoutes(deps, routing, workspaces);
      mountPartRoutes(
        { dataSource: deps.dataSource, events: events.events, logger: deps.logger, config: deps.config },
        routing,
      );
      events.mount(routing);
    },
  });
}
