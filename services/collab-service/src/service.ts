import {
  platformEntities,
  platformMigrations,
  registerPlatformConsumers,
  type ServiceDefinition,
} from '@hwp/platform';
import { createApp } from './app';
import type { CollabConfig } from './config';
import { CreateIdentityAndWorkspaces1763900000000 } from './db/migrations/1763900000000-CreateIdentityAndWorkspaces';
import { CreateEventLog1763900000100 } from './db/migrations/1763900000100-CreateEventLog';
import { CreateInvitations1763900000200 } from './db/migrations/1763900000200-CreateInvitations';
import { CreateParts1763900000300 } from './db/migrations/1763900000300-CreateParts';
import { eventEntities } from './modules/events/collab-event.entity';
import { eventsModuleFor } from './modules/events/events.module';
import { CollabUserEntity } from './modules/identity/collab-user.entity';
import { identityModuleFor } from './modules/identity/identity.module';
import { InvitationEntity } from './modules/invitations/invitation.entity';
import { partEntities } from './modules/parts/part.entity';
import { WorkspaceEntity, WorkspaceMemberEntity } from './modules/workspaces/workspace.entity';

/** The collab-service: its schema, its app and its consumers, for main.ts, the embedded runner and tests. */
export const collabService: ServiceDefinition<CollabConfig> = {
  name: 'collab-service',
  entities: [
    ...platformEntities,
    CollabUserEntity,
    WorkspaceEntity,
    WorkspaceMemberEntity,
    InvitationEntity,
    ...eventEntities,
    ...partEntities,
  ],
  migrations: [
    ...platformMigrations,
    CreateIdentityAndWorkspaces1763900000000,
    CreateEventLog1763900000100,
    CreateInvitations1763900000200,
    CreateParts1763900000300,
  ],
  blobRoutePrefix: '/v1/blobs',
  createApp,
  async registerConsumers(deps) {
    await registerPlatformConsumers(deps);
    await identityModuleFor(deps).registerConsumer();
    await eventsModuleFor(deps).registerConsumer();
  },
};
