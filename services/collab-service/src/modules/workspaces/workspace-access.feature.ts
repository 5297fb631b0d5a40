import { type ApiRouter, defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { IdentityModule } from '../identity/identity.module';
import { createRoleCheck, type RoleCheck } from './workspace-access';
import type { CollabRouting } from './workspace-route';

export interface WorkspaceAccessExports {
  roles: RoleCheck;
  /** How features declare routes: signed in, then the workspace role the route names. */
  routing(api: ApiRouter): CollabRouting;
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
    return { exports: { roles, routing: (api) => ({ api, requireUser: identity.requireUser, roles }) } };
  },
});
