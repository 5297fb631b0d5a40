import type { WorkspaceRole } from '@hwp/contracts';
import {
  ExpiringMap,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import type { DataSource } from 'typeorm';
import type { ApiKeyAccess } from './api-keys';
import { WorkspaceEntity, WorkspaceMemberEntity } from './workspace.entity';
import { type WorkspaceAccess, WorkspaceScope } from './workspace-scope';

export const ROLE_RANK: Record<WorkspaceRole, number> = { viewer: 0, engineer: 1, manager: 2, owner: 3 };

export function atLeast(role: WorkspaceRole, required: WorkspaceRole): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[required];
}

export type { WorkspaceAccess } from './workspace-scope';

declare global {
  namespace Express {
    interface Request {
      workspace?: WorkspaceScope;
      /** Set when a workspace API key authenticated the request (read routes only). */
      apiKey?: ApiKeyAccess;
    }
  }
}

/** Where a route names its workspace. */
export type WorkspaceSource = (req: Request) => unknown;
export const fromParam =
  (name: string): WorkspaceSource =>
  (req) =>
    req.params[name];
export const fromQuery =
  (name: string): WorkspaceSource =>
  (req) =>
    (req.query as Record<string, unknown>)[name];
export const fromBody =
  (name: string): WorkspaceSource =>
  (req) =>
    bodyField(req.body, name);

/** A field of a JSON object body (any other body has none). */
function bodyField(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null
    ? Object.getOwnPropertyDescriptor(body, name)?.value
    : undefined;
}

export function requestWorkspace(req: Request): WorkspaceScope {
  if (!req.workspace) throw new Error('the workspace role check did not run for this route');
  return req.workspace;
}

/** How long a membership read is reused (a backstop: changes drop it at once, see MembershipCache). */
const MEMBERSHIP_TTL_MS = 5_000;
const MEMBERSHIPS_KEPT = 10_000;

/**
 * Memberships read recently, per process: each request of a member would otherwise read its role
 * again. Only memberships are kept (a non-member is always looked up, so someone just added gets in
 * at once). A workspace's entries are dropped when its members change: by this process after the
 * change commits, and on every replica when the member `update` event arrives. A read that began
 * before a drop is not kept (the generation moved), and nothing is kept longer than 5 seconds.
 */
export class MembershipCache {
  private readonly entries = new ExpiringMap<string, WorkspaceAccess>(MEMBERSHIPS_KEPT);
  generation = 0;

  get(userId: string, name: string): WorkspaceAccess | undefined {
    return this.entries.get(`${userId}|${name}`);
  }

  set(userId: string, name: string, access: WorkspaceAccess, generation: number): void {
    if (generation === this.generation)
      this.entries.set(`${userId}|${name}`, access, Date.now() + MEMBERSHIP_TTL_MS);
  }

  /** The workspace's members changed: forget what was read of them. */
  dropWorkspace(workspaceId: string): void {
    this.generation++;
    this.entries.deleteWhere((access) => access.id === workspaceId);
  }
}

/**
 * The one role check of the collaboration host. A route declares the lowest role it needs
 * (`workspaceRoute(..., { role: 'manager', workspace: fromParam('name') })`); a caller who is not a
 * member gets 404 (the workspace does not exist for them), a member below the role 403.
 */
export function createRoleCheck(dataSource: DataSource, cache = new MembershipCache()) {
  async function access(userId: string, workspaceName: string): Promise<WorkspaceAccess | null> {
    const name = workspaceName.toLowerCase();
    const known = cache.get(userId, name);
    if (known) return known;
    const generation = cache.generation;
    const rows: { id: string; name: string; role: WorkspaceRole }[] = await dataSource.manager
      .createQueryBuilder(WorkspaceEntity, 'w')
      .innerJoin(WorkspaceMemberEntity, 'm', 'm.workspace_id = w.id AND m.user_id = :userId', { userId })
      .select(['w.id AS id', 'w.name AS name', 'm.role AS role'])
      .where('w.name = :name', { name })
      .getRawMany();
    const found = rows[0] ?? null;
    if (found) cache.set(userId, name, found, generation);
    return found;
  }

  function requireRole(role: WorkspaceRole, source: WorkspaceSource): RequestHandler {
    return async (req, _res, next) => {
      if (!req.collabUser && !req.apiKey) throw new UnauthorizedError();
      const name = source(req);
      if (typeof name !== 'string' || name.length === 0) {
        throw new ValidationError('workspace is required', [{ field: 'workspace', message: 'required' }]);
      }
      // A key reads its own workspace only, as a viewer.
      const key = req.apiKey?.workspace;
      const found = req.collabUser
        ? await access(req.collabUser.id, name)
        : key && key.name === name.toLowerCase()
          ? key
          : null;
      if (!found) throw new NotFoundError('Workspace not found');
      if (!atLeast(found.role, role))
        throw new ForbiddenError(`This needs the ${role} role or higher in ${found.name}`);
      req.workspace = new WorkspaceScope(dataSource.manager, found);
      next();
    };
  }

  return { access, requireRole, cache };
}

export type RoleCheck = ReturnType<typeof createRoleCheck>;
