import {
  type AcceptedInvitation,
  DEFAULT_PAGE_SIZE,
  type Invitation,
  type InvitationList,
  type InvitationStatus,
  type InvitationValidation,
  RoutingKeys,
  type SendInvitationRequest,
  type SentInvitation,
} from '@hwp/contracts';
import {
  AppError,
  type Bus,
  ConflictError,
  currentContext,
  ForbiddenError,
  NotFoundError,
  newId,
} from '@hwp/platform';
import { Brackets, type DataSource, type EntityManager, In } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceAccess } from '../workspace-access/workspace-access';
import { WorkspaceEntity } from '../workspaces/workspace.entity';
import type { WorkspacesService } from '../workspaces/workspaces.service';
import { InvitationEntity } from './invitation.entity';
import {
  hashInvitationCode,
  invitationLink,
  invitationMessage,
  newInvitationCode,
} from './invitation-message';

const DAY_MS = 86_400_000;

export interface InvitationsOptions {
  dataSource: DataSource;
  bus: Bus;
  workspaces: WorkspacesService;
  ttlDays: number;
  /** Base of the link in the email (SITE_URL, else this host's public URL). */
  linkBase: string;
}

/** Whose invitations a listing shows. */
export type InvitationScope =
  | { kind: 'workspace'; workspaceId: string }
  | { kind: 'own'; userId: string; email: string; workspaceName?: string };

export interface ListInvitations {
  status?: 'all' | 'pending' | 'accepted';
  limit?: number;
}

function statusOf(row: InvitationEntity, now: Date): InvitationStatus {
  if (row.status === 'pending' && row.expiresAt.getTime() <= now.getTime()) return 'expired';
  return row.status;
}

function present(row: InvitationEntity, workspace: string, now = new Date()): Invitation {
  return {
    id: row.id,
    email: row.email,
    workspace,
    role: row.role,
    invitedBy: row.invitedByName,
    status: statusOf(row, now),
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    acceptedAt: row.acceptedAt ? row.acceptedAt.toISOString() : null,
  };
}

/** How invitations name their sender: the stored display name, else the username (never empty). */
function senderName(sender: CollabUserEntity): string {
  const name = sender.displayName.trim() || sender.username || sender.email;
  return name.slice(0, 100);
}

const sameEmail = (a: string, b: string) => a.length > 0 && a.toLowerCase() === b.toLowerCase();

/** Invitations to workspaces: single-use codes, stored hashed, mailed through the API host's notifier. */
export class InvitationsService {
  constructor(private readonly options: InvitationsOptions) {}

  /** Needs manager+ in `access` (the route checks it); only an owner invites an owner. */
  async send(
    sender: CollabUserEntity,
    access: WorkspaceAccess,
    request: SendInvitationRequest,
  ): Promise<SentInvitation> {
    const role = request.role ?? 'engineer';
    if (role === 'owner' && access.role !== 'owner') {
      throw new ForbiddenError('Only an owner can invite an owner');
    }
    const email = request.email.trim();
    // The signed-in sender, never the request's `invitedBy` (DECISIONS.md section 4): a name typed
    // into the body would let any manager send mail "from IT support".
    const invitedByName = senderName(sender);
    const code = newInvitationCode();
    const now = new Date();
    const row: InvitationEntity = {
      id: newId(),
      workspaceId: access.id,
      email,
      role,
      codeHash: hashInvitationCode(code),
      invitedBy: sender.id,
      invitedByName,
      status: 'pending',
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.options.ttlDays * DAY_MS),
      acceptedAt: null,
      acceptedBy: null,
    };
    await this.options.dataSource.transaction(async (manager) => {
      const member: unknown[] = await manager.query(
        `SELECT 1 FROM workspace_members m JOIN collab_users u ON u.id = m.user_id
          WHERE m.workspace_id = $1 AND u.email <> '' AND lower(u.email) = lower($2) LIMIT 1`,
        [access.id, email],
      );
      if (member.length > 0) {
        throw new ConflictError(`${email} is already a member of ${access.name}`, { field: 'email' });
      }
      // Sending again replaces the pending invitation: only the newest code works.
      await manager.query(
        `UPDATE invitations SET status = 'revoked'
          WHERE workspace_id = $1 AND lower(email) = lower($2) AND status = 'pending'`,
        [access.id, email],
      );
      await manager.insert(InvitationEntity, row);
      await this.options.bus.outbox.add(manager, {
        type: RoutingKeys.notificationRequested,
        workspace: access.name,
        actor: sender.id,
        correlationId: currentContext()?.requestId,
        data: invitationMessage({
          to: email,
          code,
          link: invitationLink(this.options.linkBase, code),
          workspace: access.name,
          role,
          invitedBy: invitedByName,
          invitedByEmail: sender.email,
          expiresAt: row.expiresAt,
        }),
      });
    });
    return { ...present(row, access.name, now), invitationCode: code };
  }

  /** Newest first. */
  async list(scope: InvitationScope, request: ListInvitations): Promise<InvitationList> {
    const manager = this.options.dataSource.manager;
    const now = new Date();
    const query = manager.createQueryBuilder(InvitationEntity, 'i');
    if (scope.kind === 'workspace') {
      query.where('i.workspaceId = :workspaceId', { workspaceId: scope.workspaceId });
    } else {
      query.where(
        new Brackets((mine) => {
          mine.where('i.invitedBy = :userId', { userId: scope.userId });
          if (scope.email) mine.orWhere('lower(i.email) = lower(:email)', { email: scope.email });
        }),
      );
      if (scope.workspaceName !== undefined) {
        query.andWhere('i.workspaceId IN (SELECT w.id FROM workspaces w WHERE w.name = :name)', {
          name: scope.workspaceName.toLowerCase(),
        });
      }
    }
    if (request.status === 'pending') {
      query.andWhere("i.status = 'pending' AND i.expiresAt > :now", { now });
    } else if (request.status === 'accepted') {
      query.andWhere("i.status = 'accepted'");
    }
    const rows = await query
      .orderBy('i.createdAt', 'DESC')
      .addOrderBy('i.id', 'DESC')
      .limit(request.limit ?? DEFAULT_PAGE_SIZE)
      .getMany();
    const names = await this.workspaceNames(
      manager,
      rows.map((r) => r.workspaceId),
    );
    return { items: rows.map((row) => present(row, names.get(row.workspaceId) ?? '', now)) };
  }

  /** Open (no login): whether the code can be accepted, and for what. Unknown codes are not an error. */
  async validate(code: string): Promise<InvitationValidation> {
    const manager = this.options.dataSource.manager;
    const row = await manager.findOneBy(InvitationEntity, { codeHash: hashInvitationCode(code) });
    if (!row) return { valid: false, reason: 'not_found' };
    const names = await this.workspaceNames(manager, [row.workspaceId]);
    const status = statusOf(row, new Date());
    return {
      valid: status === 'pending',
      ...(status === 'pending' ? {} : { reason: status }),
      workspace: names.get(row.workspaceId) ?? '',
      role: row.role,
      email: row.email,
      expiresAt: row.expiresAt.toISOString(),
    };
  }

  /**
   * Attaches the membership (never lowering a role the user already has) and uses the code up.
   * 404 unknown code, 403 another address, 409 already used, 410 expired or replaced.
   */
  async accept(user: CollabUserEntity, code: string): Promise<AcceptedInvitation> {
    return this.options.dataSource.transaction(async (manager) => {
      const row = await manager.findOne(InvitationEntity, {
        where: { codeHash: hashInvitationCode(code) },
        lock: { mode: 'pessimistic_write' },
      });
      if (!row) throw new NotFoundError('No such invitation');
      if (!sameEmail(user.email, row.email)) {
        throw new ForbiddenError('This invitation is for another email address; sign in with that address');
      }
      const status = statusOf(row, new Date());
      if (status === 'accepted') {
        throw new ConflictError('This invitation has already been used', { reason: 'accepted' });
      }
      if (status !== 'pending') {
        const detail =
          status === 'expired'
            ? 'This invitation has expired'
            : 'This invitation was replaced by a newer one';
        throw new AppError('gone', detail, { extra: { reason: status } });
      }
      const role = await this.options.workspaces.addMember(manager, row.workspaceId, user.id, row.role);
      await manager.update(
        InvitationEntity,
        { id: row.id },
        { status: 'accepted', acceptedAt: new Date(), acceptedBy: user.id },
      );
      const names = await this.workspaceNames(manager, [row.workspaceId]);
      return { workspace: names.get(row.workspaceId) ?? '', role };
    });
  }

  private async workspaceNames(manager: EntityManager, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const workspaces = await manager.findBy(WorkspaceEntity, { id: In([...new Set(ids)]) });
    return new Map(workspaces.map((w) => [w.id, w.name]));
  }
}
