import type { WorkspaceRole } from '@hwp/contracts';
import { ErrorBodyDto } from '@hwp/contracts';
import {
  type ApiRouter,
  type RawQuery,
  type RouteInput,
  type RouteSpec,
  UnauthorizedError,
} from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { type RoleCheck, requestWorkspace, type WorkspaceSource } from './workspace-access';
import type { WorkspaceAccess, WorkspaceScope } from './workspace-scope';

/** Security schemes every signed-in collaboration route accepts. */
export const SIGNED_IN = ['bearerAuth', 'sessionCookie'];

export interface CollabRouting {
  api: ApiRouter;
  requireUser: RequestHandler;
  /** As requireUser, or a workspace API key (for `readRoute`s only). */
  requireUserOrKey: RequestHandler;
  roles: RoleCheck;
}

/**
 * One route of the collaboration host, declared by a feature (`createPart(parts)`) and mounted by the
 * workspace-access feature's `routes([...])`, which supplies the sign-in and the role check.
 */
export type CollabRoute = (routing: CollabRouting) => void;

/** What a signed-in route's handler gets besides the typed input: the caller. */
export interface UserRouteInput<Body, Query> extends RouteInput<Body, Query> {
  user: CollabUserEntity;
  /** The caller's role in a workspace named in the input (null when they are not a member). */
  memberOf(workspaceName: string): Promise<WorkspaceAccess | null>;
}

/** What a workspace route's handler gets: the caller and the workspace the role check let them into. */
export interface MemberRouteInput<Body, Query> extends UserRouteInput<Body, Query> {
  workspace: WorkspaceScope;
}

export type UserRouteSpec<Body, Query> = Omit<RouteSpec<Body, Query>, 'handler'> & {
  handler: (input: UserRouteInput<Body, Query>) => unknown;
};

export type MemberRouteSpec<Body, Query> = Omit<RouteSpec<Body, Query>, 'handler'> & {
  role: WorkspaceRole;
  workspace: WorkspaceSource;
  handler: (input: MemberRouteInput<Body, Query>) => unknown;
};

function signedInUser(req: Request): CollabUserEntity {
  if (!req.collabUser) throw new UnauthorizedError();
  return req.collabUser;
}

/**
 * The route's input with the caller added. The input object is this request's own (made by the
 * router for this call): it is extended in place, not copied (a copy per request showed in profiles).
 */
function withUser<Body, Query>(
  routing: CollabRouting,
  input: RouteInput<Body, Query>,
): UserRouteInput<Body, Query> {
  const extended = input as UserRouteInput<Body, Query>;
  const user = signedInUser(input.req);
  extended.user = user;
  extended.memberOf = (workspaceName: string) => routing.roles.access(user.id, workspaceName);
  return extended;
}

/** The input with the workspace the role check let the caller in (in place, see withUser). */
function withWorkspace<Input extends RouteInput<unknown, unknown>>(
  input: Input,
): Input & { workspace: WorkspaceScope } {
  const extended = input as Input & { workspace: WorkspaceScope };
  extended.workspace = requestWorkspace(input.req);
  return extended;
}

/** The input with the caller and the workspace the role check let them into (in place, see withUser). */
function withMember<Body, Query>(
  routing: CollabRouting,
  input: RouteInput<Body, Query>,
): MemberRouteInput<Body, Query> {
  return withWorkspace(withUser(routing, input));
}

/** A route open to anyone (no sign-in): the spec as the router takes it. */
export function openRoute<Body = unknown, Query = RawQuery>(spec: RouteSpec<Body, Query>): CollabRoute {
  return (routing) => routing.api.route<Body, Query>(spec);
}

/** A route for any signed-in user (no workspace role). */
export function userRoute<Body = unknown, Query = RawQuery>(spec: UserRouteSpec<Body, Query>): CollabRoute {
  const { before = [], handler, ...rest } = spec;
  return (routing) =>
    routing.api.route<Body, Query>({
      ...rest,
      security: SIGNED_IN,
      before: [routing.requireUser, ...before],
      handler: (input) => handler(withUser(routing, input)),
    });
}

/**
 * A workspace route: the lowest role it needs is declared here, enforced by the one role check, and
 * written into the OpenAPI operation as `x-required-role` (the role-table test walks those).
 */
export function memberRoute<Body = unknown, Query = RawQuery>(
  spec: MemberRouteSpec<Body, Query>,
): CollabRoute {
  const { role, workspace, before = [], handler, ...rest } = spec;
  return (routing) =>
    routing.api.route<Body, Query>({
      ...rest,
      security: SIGNED_IN,
      before: [routing.requireUser, ...before, routing.roles.requireRole(role, workspace)],
      extensions: { ...rest.extensions, 'x-required-role': role },
      responses: {
        403: { description: `Needs the ${role} role or higher`, schema: ErrorBodyDto },
        404: { description: 'No such workspace among the caller’s', schema: ErrorBodyDto },
        ...rest.responses,
      },
      handler: (input) => handler(withMember(routing, input)),
    });
}

export type ReadRouteSpec<Body, Query> = Omit<RouteSpec<Body, Query>, 'handler'> & {
  workspace: WorkspaceSource;
  handler: (input: RouteInput<Body, Query> & { workspace: WorkspaceScope }) => unknown;
};

/**
 * A viewer route that a workspace API key may call as well as a member (BOM and part reads and
 * exports, for ERP integrations): marked `x-api-key` in the OpenAPI document. The handler gets the
 * workspace, not a user (a key is nobody).
 */
export function readRoute<Body = unknown, Query = RawQuery>(spec: ReadRouteSpec<Body, Query>): CollabRoute {
  const { workspace, before = [], handler, ...rest } = spec;
  return (routing) =>
    routing.api.route<Body, Query>({
      ...rest,
      security: [...SIGNED_IN, 'workspaceApiKey'],
      before: [routing.requireUserOrKey, ...before, routing.roles.requireRole('viewer', workspace)],
      extensions: { ...rest.extensions, 'x-required-role': 'viewer', 'x-api-key': true },
      responses: {
        403: { description: 'Needs the viewer role or higher', schema: ErrorBodyDto },
        404: { description: 'No such workspace among the caller’s (or the key’s)', schema: ErrorBodyDto },
        ...rest.responses,
      },
      handler: (input) => handler(withWorkspace(input)),
    });
}
