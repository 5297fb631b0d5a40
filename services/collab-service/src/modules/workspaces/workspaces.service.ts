import {
  DEFAULT_PAGE_SIZE,
  type Page,
  type Workspace,
  type WorkspaceMember,
  type WorkspaceRole,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError, NotFoundError, newId } from '@hwp/platform';
import { type DataSource, type EntityManager, In } from 'typeorm';
import type { CollabEvents, EventActor } from '../events/events.service';
import { CollabUserEntity } from '../identity/collab-user.entity';
import { WorkspaceEntity, WorkspaceMemberEntity } from './workspace.entity';
import { atLeast, type WorkspaceAccess } from './workspace-access';

function present(workspace: WorkspaceEntity, role: WorkspaceRole): Workspace {
  return {
    id: workspace.id,
    name: workspace.name,
    createdBy: workspace.createdBy,
    createdAt: workspace.createdAt.toISOString(),
    role,
  };
}

function presentMember(member: WorkspaceMemberEntity, user: CollabUserEntity): WorkspaceMember {
  return {
    userId: user.id,
    username: user.username,
    email: user.email,
    displayName: user.displayName,
    role: member.role,
    joinedAt: member.joinedAt.toISOString(),
  };
}

/** `update` event data when a member's role changes (`role` null: removed or left). */
export interface MemberUpdateData {
  kind: 'member';
  username: string;
  role: WorkspaceRole | null;
}

/**
 * Workspaces and their members; roles viewer < engineer < manager < owner. With `events`, role
 * changes and removals are announced on the workspace's event stream.
 */
export class WorkspacesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events?: CollabEvents,
  ) {}

  private async memberChanged(
    manager: EntityManager,
    access: WorkspaceAccess,
    actor: EventActor,
    username: string,
    role: WorkspaceRole | null,
  ): Promise<void> {
    const data: MemberUpdateData = { kind: 'member', username, role };
    await this.events?.emit(manager, access, 'update', data, { actor });
  }

  async create(userId: string, name: string): Promise<Workspace> {
    return this.dataSource.transaction(async (manager) => {
      if (await manager.exists(WorkspaceEntity, { where: { name } })) {
        throw new ConflictError(`A workspace named "${name}" exists`, { field: 'name' });
      }
      const workspace = manager.create(WorkspaceEntity, {
        id: newId(),
        name,
        createdBy: userId,
        createdAt: new Date(),
      });
      await manager.insert(WorkspaceEntity, workspace);
      await this.addMember(manager, workspace.id, userId, 'owner');
      return present(workspace, 'owner');
    });
  }

  /** Adds a member, or raises their role if the new one is higher (never lowers it). */
  async addMember(
    manager: EntityManager,
    workspaceId: string,
    userId: string,
    role: WorkspaceRole,
  ): Promise<WorkspaceRole> {
    const existing = await manager.findOne(WorkspaceMemberEntity, {
      where: { workspaceId, userId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!existing) {
      await manager.insert(WorkspaceMemberEntity, { workspaceId, userId, role, joinedAt: new Date() });
      return role;
    }
    if (atLeast(existing.role, role)) return existing.role;
    await manager.update(WorkspaceMemberEntity, { workspaceId, userId }, { role });
    return role;
  }

  async listForUser(userId: string, request: { page?: number; pageSize?: number }): Promise<Page<Workspace>> {
    const page = request.page ?? 1;
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const manager = this.dataSource.manager;
    const [memberships, total] = await manager.findAndCount(WorkspaceMemberEntity, {
      where: { userId },
      order: { joinedAt: 'ASC', workspaceId: 'ASC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
    const workspaces = memberships.length
      ? await manager.findBy(WorkspaceEntity, { id: In(memberships.map((m) => m.workspaceId)) })
      : [];
    const byId = new Map(workspaces.map((w) => [w.id, w]));
    const items = memberships.flatMap((m) => {
      const workspace = byId.get(m.workspaceId);
      return workspace ? [present(workspace, m.role)] : [];
    });
    return { items, total, page, pageSize };
  }

  async get(access: WorkspaceAccess): Promise<Workspace> {
    const workspace = await this.dataSource.manager.findOneByOrFail(WorkspaceEntity, { id: access.id });
    return present(workspace, access.role);
  }

  async members(
    access: WorkspaceAccess,
    request: { page?: number; pageSize?: number },
  ): Promise<Page<WorkspaceMember>> {
    const page = request.page ?? 1;
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const manager = this.dataSource.manager;
    const [rows, total] = await manager.findAndCount(WorkspaceMemberEntity, {
      where: { workspaceId: access.id },
      order: { joinedAt: 'ASC', userId: 'ASC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
    const users = rows.length
      ? await manager.findBy(CollabUserEntity, { id: In(rows.map((r) => r.userId)) })
      : [];
    const byId = new Map(users.map((u) => [u.id, u]));
    const items = rows.flatMap((row) => {
      const user = byId.get(row.userId);
      return user ? [presentMember(row, user)] : [];
    });
    return { items, total, page, pageSize };
  }

  /** Every member with their user record (for `GET /v1/users`). */
  async allMembers(workspaceId: string): Promise<{ user: CollabUserEntity; role: WorkspaceRole }[]> {
    const manager = this.dataSource.manager;
    const rows = await manager.find(WorkspaceMemberEntity, {
      where: { workspaceId },
      order: { joinedAt: 'ASC' },
    });
    const users = rows.length
      ? await manager.findBy(CollabUserEntity, { id: In(rows.map((r) => r.userId)) })
      : [];
    const byId = new Map(users.map((u) => [u.id, u]));
    return rows.flatMap((row) => {
      const user = byId.get(row.userId);
      return user ? [{ user, role: row.role }] : [];
    });
  }

  private async memberByUsername(manager: EntityManager, workspaceId: string, username: string) {
    const user = await manager.findOneBy(CollabUserEntity, { username: username.toLowerCase() });
    const member = user
      ? await manager.findOne(WorkspaceMemberEntity, {
          where: { workspaceId, userId: user.id },
          lock: { mode: 'pessimistic_write' },
        })
      : null;
    if (!user || !member) throw new NotFoundError('No such member');
    return { user, member };
  }

  private async keepAnOwner(manager: EntityManager, workspaceId: string): Promise<void> {
    const owners = await manager.query(
      'SELECT user_id FROM workspace_members WHERE workspace_id = $1 AND role = $2 FOR UPDATE',
      [workspaceId, 'owner'],
    );
    if (owners.length <= 1) throw new ConflictError('A workspace keeps at least one owner');
  }

  /** `actor` (who changes it) names the `update` event; without it the event says `system`. */
  async setRole(
    access: WorkspaceAccess,
    username: string,
    role: WorkspaceRole,
    actor: EventActor = 'system',
  ): Promise<WorkspaceMember> {
    return this.dataSource.transaction(async (manager) => {
      const { user, member } = await this.memberByUsername(manager, access.id, username);
      if ((role === 'owner' || member.role === 'owner') && access.role !== 'owner') {
        throw new ForbiddenError('Only an owner can grant or take the owner role');
      }
      if (member.role === 'owner' && role !== 'owner') await this.keepAnOwner(manager, access.id);
      await manager.update(WorkspaceMemberEntity, { workspaceId: access.id, userId: user.id }, { role });
      if (member.role !== role) await this.memberChanged(manager, access, actor, user.username, role);
      return presentMember({ ...member, role }, user);
    });
  }

  /** Managers remove members (owners only by an owner); anyone may leave. */
  async remove(access: WorkspaceAccess, actorId: string, username: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const { user, member } = await this.memberByUsername(manager, access.id, username);
      if (user.id !== actorId && !atLeast(access.role, 'manager')) {
        throw new ForbiddenError('This needs the manager role or higher');
      }
      if (member.role === 'owner' && user.id !== actorId && access.role !== 'owner') {
        throw new ForbiddenError('Only an owner can remove an owner');
      }
      if (member.role === 'owner') await this.keepAnOwner(manager, access.id);
      await manager.delete(WorkspaceMemberEntity, { workspaceId: access.id, userId: user.id });
      if (this.events) {
        const actor = user.id === actorId ? user : await manager.findOneBy(CollabUserEntity, { id: actorId });
        await this.memberChanged(manager, access, actor ?? 'system', user.username, null);
      }
    });
  }
}
