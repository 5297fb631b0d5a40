import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { WorkspaceAccessExports } from '../workspaces/workspace-access.feature';
import type { WorkspacesExports } from '../workspaces/workspaces.feature';
import { InvitationEntity } from './invitation.entity';
import { mountInvitationRoutes } from './invitations.routes';
import { CreateInvitations1763900000200 } from './migrations/1763900000200-CreateInvitations';

/** Invitations to a workspace, sent by email through the API host's notifier. */
export const invitationsFeature = defineFeature<
  CollabConfig,
  Record<string, never>,
  { 'workspace-access': WorkspaceAccessExports; workspaces: WorkspacesExports }
>({
  name: 'invitations',
  entities: [InvitationEntity],
  migrations: [CreateInvitations1763900000200],
  build: (deps, needs) => ({
    mount: (api) => {
      mountInvitationRoutes(deps, needs['workspace-access'].routing(api), needs.workspaces.workspaces);
    },
    exports: {},
  }),
});
