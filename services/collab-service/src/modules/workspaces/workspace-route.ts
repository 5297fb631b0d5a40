import type { WorkspaceRole } from '@hwp/contracts';
import { ErrorBodyDto } from '@hwp/contracts';
import type { ApiRouter, RouteSpec } from '@hwp/platform';
import type { RequestHandler } from 'express';
import type { RoleCheck, WorkspaceSource } from './workspace-access';

/** Security schemes every signed-in collaboration route accepts. */
export const SIGNED_IN = ['bearerAuth', 'sessionCookie'];

export interface CollabRouting {
  api: ApiRouter;
  requireUser: RequestHandler;
  roles: RoleCheck;
}

/** A route for any signed-in user (no workspace role). */
export function userRoute(routing: CollabRouting, spec: RouteSpec): void {
  const { before = [], ...rest } = spec;
  routing.api.route({ ...rest, security: SIGNED_IN, before: [routing.requireUser, ...before] });
}

/**
 * A workspace route: the lowest role it needs is declared here, enforced by the one role check, and
 * written into the OpenAPI operation as `x-required-role` (the role-table test walks those).
 */
export function memberRoute(
  routing: CollabRouting,
  spec: RouteSpec & { role: WorkspaceRole; workspace: WorkspaceSource },
): void {
  const { role, workspace, before = [], ...rest } = spec;
  routing.api.route({
    ...rest,
    security: SIGNED_IN,
    before: [routing.requireUser, ...before, routing.roles.requireRole(role, workspace)],
    extensions: { ...rest.extensions, 'x-required-role': role },
    responses: {
      403: { description: `Needs the ${role} role or higher`, schema: ErrorBodyDto },
      404: { description: 'No such workspace among the caller’s', schema: ErrorBodyDto },
      ...rest.responses,
    },
  });
}
