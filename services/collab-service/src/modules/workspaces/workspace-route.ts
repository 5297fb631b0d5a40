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
import {
  type RoleCheck,
  requestWorkspace,
  type WorkspaceAccess,
  type WorkspaceSource,
} from './workspace-access';

/** Security schemes every signed-in collaboration route accepts. */
export const SIGNED_IN = ['bearerAuth', 'sessionCookie'];

export interface CollabRouting {
  api: ApiRouter;
  requireUser: RequestHandler;
  roles: RoleCheck;
}

/** What a signed-in route's handler gets besides the typed input: the caller. */
export interface UserRouteInput<Body, Query> extends RouteInput<Body, Query> {
  user: CollabUserEntity;
}

/** What a workspace route's handler gets: the caller and the workspace the role check let them into. */
export interface MemberRouteInput<Body, Query> extends UserRouteInput<Body, Query> {
  workspace: WorkspaceAccess;
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

/** A route for any signed-in user (no workspace role). */
export function userRoute<Body = unknown, Query = RawQuery>(
  routing: CollabRouting,
  spec: UserRouteSpec<Body, Query>,
): void {
  const { before = [], handler, ...rest } = spec;
  routing.api.route<Body, Query>({
    ...rest,
    security: SIGNED_IN,
    before: [routing.requireUser, ...before],
    handler: (input) => handler({ ...input, user: signedInUser(input.req) }),
  });
}

/**
 * A workspace route: the lowest role it needs is declared here, enforced by the one role check, and
 * written into the OpenAPI operation as `x-required-role` (the role-table test walks those).
 */
export function memberRoute<Body = unknown, Query = RawQuery>(
  routing: CollabRouting,
  spec: MemberRouteSpec<Body, Query>,
): void {
  const { role, workspace, before = [], handler, ...rest } = spec;
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
    handler: (input) =>
      handler({ ...input, user: signedInUser(input.req), workspace: requestWorkspace(input.req) }),
  });
}
