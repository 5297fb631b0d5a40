import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import type { IdentityModule } from '../identity/identity.module';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import { CreateIdentityAndWorkspaces1763900000000 } from './migrations/1763900000000-CreateIdentityAndWorkspaces';
import { WorkspaceEntity, WorkspaceMemberEntity } from './workspace.entity';
import {
  createWorkspace,
  getWorkspace,
  initUser,
  listMembers,
  listUsers,
  listWorkspaces,
  removeMember,
  setMemberRole,
} from './workspaces.routes';
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
  build: ({ dataSource, blobs }, { identity, events, 'workspace-access': access }) => {
    const workspaces = new WorkspacesService(dataSource, events.events, (id) =>
      access.roles.cache.dropWorkspace(id),
    );
    return {
      routes: access.routes([
        createWorkspace(workspaces),
        listWorkspaces(workspaces),
        getWorkspace(workspaces),
        listMembers(workspaces),
        setMemberRole(workspaces),
        removeMember(workspaces),
        listUsers(workspaces, events.presence),
        initUser(workspaces, identity.users, blobs),
      ]),
      exports: { workspaces },
    };
  },
});
