import { clientKey, createRateLimiter, defineFeature, ownPublicUrl } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import type { WorkspacesExports } from '../workspaces/workspaces.feature';
import { InvitationEntity } from './invitation.entity';
import { acceptInvitation, listInvitations, sendInvitation, validateInvitation } from './invitations.routes';
import { InvitationsService } from './invitations.service';
import { CreateInvitations1763900000200 } from './migrations/1763900000200-CreateInvitations';

/** Invitations to a workspace, sent by email through the API host's notifier. */
export const invitationsFeature = defineFeature<
  CollabConfig,
  { invitations: InvitationsService },
  { 'workspace-access': WorkspaceAccessExports; workspaces: WorkspacesExports }
>({
  name: 'invitations',
  entities: [InvitationEntity],
  migrations: [CreateInvitations1763900000200],
  build: ({ config, dataSource, bus, logger }, { 'workspace-access': access, workspaces }) => {
    const invitations = new InvitationsService({
      dataSource,
      bus,
      workspaces: workspaces.workspaces,
      ttlDays: config.INVITATION_TTL_DAYS,
      linkBase: config.SITE_URL ?? ownPublicUrl(config),
    });
    // Per client address, as section 8 says: the collaboration host never sets `req.user`, so
    // clientKey gives `ip:<address>`. In `before` it runs ahead of the role check: every attempt
    // by a signed-in caller counts, allowed or not.
    const sendLimit = createRateLimiter(
      { dataSource, logger },
      {
        name: 'invitations',
        limit: config.INVITATIONS_PER_MINUTE_PER_IP,
        windowMs: 60_000,
        key: clientKey,
        message: 'Too many invitations from this address; try again in a minute',
      },
    );
    return {
      routes: access.routes([
        sendInvitation(invitations, sendLimit),
        listInvitations(invitations),
        validateInvitation(invitations),
        acceptInvitation(invitations),
      ]),
      exports: { invitations },
    };
  },
});
