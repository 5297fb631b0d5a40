import type { WorkspaceRole } from '@hwp/contracts';
import { type EntityManager, In } from 'typeorm';
import { CollabUserEntity } from '../identity/collab-user.entity';
import { WorkspaceEntity, WorkspaceMemberEntity } from './workspace.entity';

/** A membership with its user record. */
export interface MemberRow {
  member: WorkspaceMemberEntity;
  user: CollabUserEntity;
}

interface PageRequest {
  page: number;
  pageSize: number;
}

/**
 * Workspaces and memberships on one manager (a transaction's, or the data source's). Memberships are
 * not read through a WorkspaceScope: they are what the role check reads to build one, and a user's
 * list spans workspaces (see NOT_SCOPED in test/workspace-scope.test.ts).
 */
export class WorkspacesRepository {
  constructor(private readonly manager: EntityManager) {}

  nameTaken(name: string): Promise<boolean> {
    return this.manager.exists(WorkspaceEntity, { where: { name } });
  }

  async insert(workspace: WorkspaceEntity): Promise<void> {
    await this.manager.insert(WorkspaceEntity, workspace);
  }

  findById(id: string): Promise<WorkspaceEntity> {
    return this.manager.findOneByOrFail(WorkspaceEntity, { id });
  }

  /** The membership, locked until the transaction ends (role changes of one member queue). */
  lockMembership(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.manager.findOne(WorkspaceMemberEntity, {
      where: { workspaceId, userId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async insertMember(workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    await this.manager.insert(WorkspaceMemberEntity, { workspaceId, userId, role, joinedAt: new Date() });
  }

  async setRole(workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    await this.manager.update(WorkspaceMemberEntity, { workspaceId, userId }, { role });
  }

  async deleteMember(workspaceId: string, userId: string): Promise<void> {
    await this.manager.delete(WorkspaceMemberEntity, { workspaceId, userId });
  }

  /** A page of a user's memberships with their workspaces, oldest membership first. */
  async workspacesOf(
    userId: string,
    { page, pageSize }: PageRequest,
  ): Promise<[{ workspace: WorkspaceEntity; role: WorkspaceRole }[], number]> {
    const [memberships, total] = await this.manager.findAndCount(WorkspaceMemberEntity, {
      where: { userId },
      order: { joinedAt: 'ASC', workspaceId: 'ASC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
    const workspaces = memberships.length
      ? await this.manager.findBy(WorkspaceEntity, { id: In(memberships.map((m) => m.workspaceId)) })
      : [];
    const byId = new Map(workspaces.map((w) => [w.id, w]));
    const rows = memberships.flatMap((m) => {
      const workspace = byId.get(m.workspaceId);
      return workspace ? [{ workspace, role: m.role }] : [];
    });
    return [rows, total];
  }

  /** A page of a workspace's members (all of them without `page`), earliest first. */
  async membersOf(workspaceId: string, page?: PageRequest): Promise<[MemberRow[], number]> {
    const [members, total] = await this.manager.findAndCount(WorkspaceMemberEntity, {
      where: { workspaceId },
      order: { joinedAt: 'ASC', userId: 'ASC' },
      ...(page ? { skip: (page.page - 1) * page.pageSize, take: page.pageSize } : {}),
    });
    const users = members.length
      ? await this.manager.findBy(CollabUserEntity, { id: In(members.map((r) => r.userId)) })
      : [];
    const byId = new Map(users.map((u) => [u.id, u]));
    const rows = members.flatMap((member) => {
      const user = byId.get(member.userId);
      return user ? [{ member, user }] : [];
    });
    return [rows, total];
  }

  /** The member named `username`, locked until the transaction ends; null when there is none. */
  async lockMemberByUsername(workspaceId: string, username: string): Promise<MemberRow | null> {
    const user = await this.manager.findOneBy(CollabUserEntity, { username: username.toLowerCase() });
    const member = user ? await this.lockMembership(workspaceId, user.id) : null;
    return user && member ? { user, member } : null;
  }

  /** How many owners the workspace has, their rows locked (two demotions cannot both pass). */
  async lockOwnerCount(workspaceId: string): Promise<number> {
    const owners = await this.manager.query(
      'SELECT user_id FROM workspace_members WHERE workspace_id = $1 AND role = $2 FOR UPDATE',
      [workspaceId, 'owner'],
    );
    return owners.length;
  }

  userById(id: string): Promise<CollabUserEntity | null> {
    return this.manager.findOneBy(CollabUserEntity, { id });
  }
}
