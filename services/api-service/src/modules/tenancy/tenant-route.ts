import {
  type ApiRouter,
  type RawQuery,
  type RouteInput,
  type RouteSpec,
  UnauthorizedError,
} from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import { type ResolvedTenant, requestTenant } from './tenant-context';

/** The signed-in caller as a handler sees it. */
export interface Caller {
  id: string;
}

type SignedInSpec<Body, Query, Input> = Omit<
  RouteSpec<Body, Query>,
  'security' | 'rateLimited' | 'handler'
> & {
  handler: (input: Input) => unknown;
};

/** A route of a signed-in user whose handler gets `{ user, body, query, params }`. */
export type UserRouteSpec<Body = unknown, Query = RawQuery> = SignedInSpec<
  Body,
  Query,
  RouteInput<Body, Query> & { user: Caller }
>;

/**
 * A route in the request's tenant (X-Tenant-ID, else the user's default): the handler gets
 * `{ user, tenant, body, query, params }`, the twin of the collaboration host's `memberRoute`. Any
 * member may call it: what a role may do with a file is the file's permission rule (files feature).
 */
export type TenantRouteSpec<Body = unknown, Query = RawQuery> = SignedInSpec<
  Body,
  Query,
  RouteInput<Body, Query> & { user: Caller; tenant: ResolvedTenant }
>;

function callerOf(req: Request): Caller {
  if (!req.user) throw new UnauthorizedError();
  return { id: req.user.id };
}

/**
 * Declares a signed-in route: `signedIn` (authenticate, the rate limit, tenant resolution) runs
 * first, then the route's own `before`.
 */
export function userRoute<Body = unknown, Query = RawQuery>(
  api: ApiRouter,
  signedIn: RequestHandler[],
  spec: UserRouteSpec<Body, Query>,
): void {
  const { handler, before = [], ...rest } = spec;
  api.route<Body, Query>({
    ...rest,
    security: ['bearerAuth'],
    rateLimited: true,
    before: [...signedIn, ...before],
    handler: (input) => handler({ ...input, user: callerOf(input.req) }),
  });
}

export function tenantRoute<Body = unknown, Query = RawQuery>(
  api: ApiRouter,
  signedIn: RequestHandler[],
  spec: TenantRouteSpec<Body, Query>,
): void {
  const { handler, ...rest } = spec;
  userRoute<Body, Query>(api, signedIn, {
    ...rest,
    handler: (input) => handler({ ...input, tenant: requestTenant(input.req) }),
  });
}
