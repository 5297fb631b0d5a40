import type { WorkspaceRole } from '@hwp/contracts';
import { Ownership, ScopedRepository } from '@hwp/platform';
import { Column, type EntityManager, type EntityTarget, type ObjectLiteral, PrimaryColumn } from 'typeorm';

/** A row that belongs to one workspace. */
export interface WorkspaceOwned extends ObjectLiteral {
  workspaceId: string;
}

/**
 * The columns a workspace-owned row starts with: its id (a UUID the service makes) and its workspace.
 * Entities extend it and are registered with registerWorkspaceOwned.
 */
export abstract class WorkspaceRow implements WorkspaceOwned {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;
}

const workspaceOwned = new Ownership('workspaceId', 'workspace-owned');

/**
 * Declares an entity workspace-owned: it is read and written only through a WorkspaceScope. A test
 * walks every entity with a `workspace_id` column and checks it is registered here.
 */
export function registerWorkspaceOwned(entity: EntityTarget<WorkspaceOwned>): void {
  workspaceOwned.register(entity);
}

export function isWorkspaceOwned(entity: EntityTarget<ObjectLiteral>): boolean {
  return workspaceOwned.has(entity);
}

/** Every query carries `workspace_id = <the scope's workspace>` (the platform's ScopedRepository). */
export type WorkspaceScopedRepository<E extends WorkspaceOwned> = ScopedRepository<E, 'workspaceId'>;

/** The workspace a request acts in and the caller's role there. */
export interface WorkspaceAccess {
  id: string;
  name: string;
  role: WorkspaceRole;
}

/**
 * The workspace a request was let into (set by the role check, like TenantScope on the API host) on
 * one manager: repositories of workspace-owned rows come from it, so no query forgets the workspace.
 * `in(manager)` is the same workspace inside a transaction.
 */
export class WorkspaceScope implements WorkspaceAccess {
  readonly id: string;
  readonly name: string;
  readonly role: WorkspaceRole;

  constructor(
    readonly manager: EntityManager,
    access: WorkspaceAccess,
  ) {
    this.id = access.id;
    this.name = access.name;
    this.role = access.role;
  }

  in(manager: EntityManager): WorkspaceScope {
    return manager === this.manager ? this : new WorkspaceScope(manager, this);
  }

  repo<E extends WorkspaceOwned>(entity: EntityTarget<E>): WorkspaceScopedRepository<E> {
    return new ScopedRepository(this.manager, entity, workspaceOwned, this.id);
  }

  /** `{ id, name }` for event envelopes and presenters. */
  get ref(): { id: string; name: string } {
    return { id: this.id, name: this.name };
  }
}
