import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import type { IdentityModule } from '../identity/identity.module';
import { CreateIdentityAndWorkspaces1763900000000 } from './migrations/1763900000000-CreateIdentityAndWorkspaces';
import { WorkspaceEntity, WorkspaceMemberEntity } from './workspace.entity';
import type { WorkspaceAccessExports } from './workspace-access.feature';
import { mountWorkspaceRoutes } from './workspaces.routes';
import { WorkspacesService } from './workspaces.service';

export interface WorkspacesExports {
  workspaces: WorkspacesService;
}

/**
 * Workspaces and their members. Its migration also creates `collab_users` (the identity feature's
 * table): the two were created together before features had migrations of their own.
 */
export const workspacesFeature = defineFeature<
  CollabConfig,
  WorkspacesExports,
  { identity: IdentityModule; events: EventsModule; 'workspace-access': WorkspaceAccessExports }
>({
  name: 'workspaces',
  entities: [WorkspaceEntity, WorkspaceMemberEntity],
  migrations: [CreateIdentityAndWorkspaces1763900000000],
  build: (deps, needs) => {
    const workspaces = new WorkspacesService(deps.dataSource, needs.events.events);
    return {
      mount: (api) =>
        mountWorkspaceRoutes({
          routing: needs['workspace-access'].routing(api),
          workspaces,
          users: needs.identity.users,
          presence: needs.events.presence,
          blobs: deps.blobs,
          dataSource: deps.dataSource,
        }),
      exports: { workspaces },
    };
  },
});
