import {
  DEFAULT_PAGE_SIZE,
  type Page,
  type Workspace,
  type WorkspaceMember,
  type WorkspaceRole,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError, NotFoundError, newId } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabEvents, EventActor } from '../events/events.service';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { atLeast, type WorkspaceAccess } from '../workspace-access/workspace-access';
import { WorkspaceEntity, type WorkspaceMemberEntity } from './workspace.entity';
import { WorkspacesRepository } from './workspaces.repository';

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
  /** The member's user id: every replica ends that user's streams of the workspace on removal. */
  userId: string;
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
    /** Told when a workspace's members changed (after the change commits, where this service commits it). */
    private readonly membersChanged: (workspaceId: string) => void = () => {},
  ) {}

  private async memberChanged(
    manager: EntityManager,
    access: WorkspaceAccess,
    actor: EventActor,
    member: { id: string; username: string },
    role: WorkspaceRole | null,
  ): Promise<void> {
    const data: MemberUpdateData = { kind: 'member', username: member.username, userId: member.id, role };
    await this.events?.emit(manager, access, 'update', data, { actor });
  }

  private repo(manager: EntityManager = this.dataSource.manager): WorkspacesRepository {
    return new WorkspacesRepository(manager);
  }

  async create(userId: string, name: string): Promise<Workspace> {
    return this.dataSource.transaction(async (manager) => {
      const repo = this.repo(manager);
      if (await repo.nameTaken(name)) {
        throw new ConflictError(`A workspace named "${name}" exists`, { field: 'name' });
      }
      const workspace = manager.create(WorkspaceEntity, {
        id: newId(),
        name,
        createdBy: userId,
        createdAt: new Date(),
      });
      await repo.insert(workspace);
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
    const repo = this.repo(manager);
    const existing = await repo.lockMembership(workspaceId, userId);
    if (!existing) {
      await repo.insertMember(workspaceId, userId, role);
      return role;
    }
    if (atLeast(existing.role, role)) return existing.role;
    await repo.setRole(workspaceId, userId, role);
    this.membersChanged(workspaceId);
    return role;
  }

  async listForUser(userId: string, request: { page?: number; pageSize?: number }): Promise<Page<Workspace>> {
    const page = request.page ?? 1;
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const [rows, total] = await this.repo().workspacesOf(userId, { page, pageSize });
    return { items: rows.map((r) => present(r.workspace, r.role)), total, page, pageSize };
  }

  async get(access: WorkspaceAccess): Promise<Workspace> {
    return present(await this.repo().findById(access.id), access.role);
  }

  async members(
    access: WorkspaceAccess,
    request: { page?: number; pageSize?: number },
  ): Promise<Page<WorkspaceMember>> {
    const page = request.page ?? 1;
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const [rows, total] = await this.repo().membersOf(access.id, { page, pageSize });
    return { items: rows.map((r) => presentMember(r.member, r.user)), total, page, pageSize };
  }

  /** Every member with their user record (for `GET /v1/users`). */
  async allMembers(workspaceId: string): Promise<{ user: CollabUserEntity; role: WorkspaceRole }[]> {
    const [rows] = await this.repo().membersOf(workspaceId);
    return rows.map((r) => ({ user: r.user, role: r.member.role }));
  }

  private async memberByUsername(repo: WorkspacesRepository, workspaceId: string, username: string) {
    const found = await repo.lockMemberByUsername(workspaceId, username);
    if (!found) throw new NotFoundError('No such member');
    return found;
  }

  private async keepAnOwner(repo: WorkspacesRepository, workspaceId: string): Promise<void> {
    if ((await repo.lockOwnerCount(workspaceId)) <= 1)
      throw new ConflictError('A workspace keeps at least one owner');
  }

  /** `actor` (who changes it) names the `update` event; without it the event says `system`. */
  async setRole(
    access: WorkspaceAccess,
    username: string,
    role: WorkspaceRole,
    actor: EventActor = 'system',
  ): Promise<WorkspaceMember> {
    const changed = await this.dataSource.transaction(async (manager) => {
      const repo = this.repo(manager);
      const { user, member } = await this.memberByUsername(repo, access.id, username);
      if ((role === 'owner' || member.role === 'owner') && access.role !== 'owner') {
        throw new ForbiddenError('Only an owner can grant or take the owner role');
      }
      if (member.role === 'owner' && role !== 'owner') await this.keepAnOwner(repo, access.id);
      await repo.setRole(access.id, user.id, role);
      if (member.role !== role) await this.memberChanged(manager, access, actor, user, role);
      return presentMember({ ...member, role }, user);
    });
    this.membersChanged(access.id);
    return changed;
  }

  /** Managers remove members (owners only by an owner); anyone may leave. */
  async remove(access: WorkspaceAccess, actorId: string, username: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const repo = this.repo(manager);
      const { user, member } = await this.memberByUsername(repo, access.id, username);
      if (user.id !== actorId && !atLeast(access.role, 'manager')) {
        throw new ForbiddenError('This needs the manager role or higher');
      }
      if (member.role === 'owner' && user.id !== actorId && access.role !== 'owner') {
        throw new ForbiddenError('Only an owner can remove an owner');
      }
      if (member.role === 'owner') await this.keepAnOwner(repo, access.id);
      await repo.deleteMember(access.id, user.id);
      if (this.events) {
        const actor = user.id === actorId ? user : await repo.userById(actorId);
        await this.memberChanged(manager, access, actor ?? 'system', user, null);
      }
    });
    this.membersChanged(access.id);
  }
}
