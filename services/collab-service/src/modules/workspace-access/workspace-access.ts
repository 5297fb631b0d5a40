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
import { WorkspaceEntity, WorkspaceMemberEntity } from '../workspaces/workspace.entity';
import type { ApiKeyAccess } from './api-keys';
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

/** What a workspace source may look up: the workspace of a stored resource, a user's workspaces. */
export interface WorkspaceLookup {
  /** The name of the workspace that holds the resource, or null when no such resource exists. */
  ofResource(kind: ResourceKind, id: string): Promise<string | null>;
  /** The name of the caller's only workspace where they hold `role` or higher, else null. */
  soleWorkspace(userId: string, role: WorkspaceRole): Promise<string | null>;
}

/**
 * Where a route names its workspace: a name from the request (path, query, body), or one looked up
 * (the workspace of the resource an id in the path names).
 */
export type WorkspaceSource = ((req: Request, lookup: WorkspaceLookup) => unknown) & {
  /** The 404 message when the caller is no member: a resource's says what an unknown id says. */
  notFound?: string;
};
/** A value read from the request itself (a workspace source that looks nothing up). */
export type RequestField = (req: Request) => unknown;

export const fromParam =
  (name: string): RequestField =>
  (req) =>
    req.params[name];
export const fromQuery =
  (name: string): RequestField =>
  (req) =>
    (req.query as Record<string, unknown>)[name];
export const fromBody =
  (name: string): RequestField =>
  (req) =>
    bodyField(req.body, name);

/** `workspace` in the query or, for writes, in the body. */
export const queryOrBody: RequestField = (req) => fromQuery('workspace')(req) ?? fromBody('workspace')(req);

/** The resources a path id may name: their tables (each with `workspace_id`) and 404 messages. */
const RESOURCES = {
  part: { table: 'parts', notFound: 'Part not found' },
  bom: { table: 'boms', notFound: 'BOM not found' },
  review: { table: 'design_reviews', notFound: 'No such review in the workspace' },
  task: { table: 'tasks', notFound: 'No such task in the workspace' },
  reviewTemplate: { table: 'review_templates', notFound: 'No such review template in the workspace' },
} as const;
export type ResourceKind = keyof typeof RESOURCES;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The workspace of the resource the path parameter names (one primary-key lookup): an id in a path
 * names its own workspace, so the client need not say it again. A `workspace` the client does send
 * (query or body) must be that one, else 404: it can never reach another workspace's row. An unknown
 * id is 404 too, as is a resource in a workspace the caller is not a member of (the role check).
 */
export function fromResource(
  kind: ResourceKind,
  idOf: (req: Request) => unknown = fromParam('id'),
): WorkspaceSource {
  const { notFound } = RESOURCES[kind];
  const source: WorkspaceSource = async (req, lookup) => {
    const id = idOf(req);
    const name = typeof id === 'string' && UUID.test(id) ? await lookup.ofResource(kind, id) : null;
    const named = queryOrBody(req);
    if (!name || (named !== undefined && (typeof named !== 'string' || named.toLowerCase() !== name))) {
      throw new NotFoundError(notFound);
    }
    return name;
  };
  source.notFound = notFound;
  return source;
}

/**
 * `workspace` from the query or body; when the client names none, the caller's only workspace where
 * they hold `role` (a route whose document row names no workspace). Several: 400 naming `workspace`.
 */
export function namedOrSole(role: WorkspaceRole): WorkspaceSource {
  return async (req, lookup) => {
    const named = queryOrBody(req);
    if (named !== undefined || !req.collabUser) return named;
    return (await lookup.soleWorkspace(req.collabUser.id, role)) ?? undefined;
  };
}

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

  const lookup: WorkspaceLookup = {
    // Unscoped by design: an id in a path names its own workspace, read here (by primary key, in
    // any workspace) before the role check that builds the scope; the row itself is not returned.
    async ofResource(kind, id) {
      const rows: { name: string }[] = await dataSource.query(
        `SELECT w.name FROM ${RESOURCES[kind].table} r JOIN workspaces w ON w.id = r.workspace_id WHERE r.id = $1`,
        [id],
      );
      return rows[0]?.name ?? null;
    },
    async soleWorkspace(userId, role) {
      const rows: { name: string }[] = await dataSource.query(
        `SELECT w.name FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
          WHERE m.user_id = $1 AND m.role = ANY($2) LIMIT 2`,
        [userId, Object.keys(ROLE_RANK).filter((r) => atLeast(r as WorkspaceRole, role))],
      );
      return rows.length === 1 ? rows[0].name : null;
    },
  };

  function requireRole(role: WorkspaceRole, source: WorkspaceSource): RequestHandler {
    return async (req, _res, next) => {
      if (!req.collabUser && !req.apiKey) throw new UnauthorizedError();
      const name = await source(req, lookup);
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
      if (!found) throw new NotFoundError(source.notFound ?? 'Workspace not found');
      if (!atLeast(found.role, role))
        throw new ForbiddenError(`This needs the ${role} role or higher in ${found.name}`);
      req.workspace = new WorkspaceScope(dataSource.manager, found);
      next();
    };
  }

  return { access, requireRole, cache };
}

export type RoleCheck = ReturnType<typeof createRoleCheck>;
