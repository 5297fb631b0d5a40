import { RoutingKeys } from '@hwp/contracts';
import { type ApiRouter, bearerOf, defineFeature, ForbiddenError, type RouteMount } from '@hwp/platform';
import type { RequestHandler } from 'express';
import type { CollabConfig } from '../../config';
import type { IdentityModule } from '../identity/identity.module';
import { ApiKeys, isApiKey, WorkspaceApiKeyEntity } from './api-keys';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys.routes';
import { CreateWorkspaceApiKeys1764100000100 } from './migrations/1764100000100-CreateWorkspaceApiKeys';
import { createRoleCheck, type RoleCheck } from './workspace-access';
import type { CollabRoute, CollabRouting } from './workspace-route';

export interface WorkspaceAccessExports {
  roles: RoleCheck;
  keys: ApiKeys;
  /** Mounts a feature's routes, in order: signed in, then the workspace role each route names. */
  routes(list: CollabRoute[]): RouteMount[];
}

/**
 * The role check every workspace route goes through (DECISIONS.md section 4), and workspace API keys:
 * a key is accepted by the read routes that allow one (BOM and part reads, exports) and nowhere else.
 */
export const workspaceAccessFeature = defineFeature<
  CollabConfig,
  WorkspaceAccessExports,
  { identity: IdentityModule }
>({
  name: 'workspace-access',
  entities: [WorkspaceApiKeyEntity],
  migrations: [CreateWorkspaceApiKeys1764100000100],
  build: (deps, { identity }) => {
    const keys = new ApiKeys(deps.dataSource);
    const roles = createRoleCheck(deps.dataSource);
    // A valid key on a route that takes none is a credential without the permission: 403 (a bad one 401).
    const requireUser: RequestHandler = (req, res, next) => {
      const token = bearerOf(req);
      if (!token || !isApiKey(token)) return identity.requireUser(req, res, next);
      keys
        .verify(token)
        .then(
          () =>
            next(
              new ForbiddenError(
                'API keys are read-only: they read BOMs, parts and their exports; sign in as a member for anything else',
              ),
            ),
          next,
        );
    };
    const requireUserOrKey: RequestHandler = (req, res, next) => {
      const token = bearerOf(req);
      if (!token || !isApiKey(token)) return identity.requireUser(req, res, next);
      keys.verify(token).then((access) => {
        req.apiKey = access;
        next();
      }, next);
    };
    const routing = (api: ApiRouter): CollabRouting => ({ api, requireUser, requireUserOrKey, roles });
    const mount = (list: CollabRoute[]): RouteMount[] => list.map((route) => (api) => route(routing(api)));
    // Every replica drops the memberships it keeps when a workspace's members change anywhere.
    const consumers = () =>
      deps.bus.subscribeTo(
        { consumer: 'membership-cache', keys: [RoutingKeys.collabEvent], broadcast: true, prefetch: 50 },
        async ({ data }) => {
          if (data.event.type === 'update' && data.event.data.kind === 'member')
            roles.cache.dropWorkspace(data.workspaceId);
        },
      );
    return {
      consumers,
      routes: mount([createApiKey(keys), listApiKeys(keys), revokeApiKey(keys)]),
      exports: { roles, keys, routes: mount },
    };
  },
});
