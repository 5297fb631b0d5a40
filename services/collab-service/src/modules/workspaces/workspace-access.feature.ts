import { type ApiRouter, defineFeature, type RouteMount } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { IdentityModule } from '../identity/identity.module';
import { createRoleCheck, type RoleCheck } from './workspace-access';
import type { CollabRoute, CollabRouting } from './workspace-route';

export interface WorkspaceAccessExports {
  roles: RoleCheck;
  /** Mounts a feature's routes, in order: signed in, then the workspace role each route names. */
  routes(list: CollabRoute[]): RouteMount[];
}

/** The role check every workspace route goes through (DECISIONS.md section 4). */
export const workspaceAccessFeature = defineFeature<
  CollabConfig,
  WorkspaceAccessExports,
  { identity: IdentityModule }
>({
  name: 'workspace-access',
  build: (deps, { identity }) => {
    const roles = createRoleCheck(deps.dataSource);
    const routing = (api: ApiRouter): CollabRouting => ({ api, requireUser: identity.requireUser, roles });
    return { exports: { roles, routes: (list) => list.map((route) => (api) => route(routing(api))) } };
  },
});
