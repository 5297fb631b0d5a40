import { ErrorBodyDto } from '@hwp/contracts';
import { type ApiRouter, type RawQuery, type RouteSpec, UnauthorizedError } from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import { type ResolvedTenant, requestTenant } from '../../tenants/tenant-context';
import type { FilesService } from '../files.service';

export interface FileRouteDeps {
  files: FilesService;
  /** authenticate, the standard rate limit, then tenant resolution. */
  signedIn: RequestHandler[];
}

/** A signed-in, rate-limited route in the resolved tenant. */
export type FileRoute = <Body = unknown, Query = RawQuery>(
  spec: Omit<RouteSpec<Body, Query>, 'security' | 'rateLimited'>,
) => void;

export interface FileRouting extends FileRouteDeps {
  fileRoute: FileRoute;
  api: ApiRouter;
}

export function fileRouting(api: ApiRouter, deps: FileRouteDeps): FileRouting {
  return {
    ...deps,
    api,
    fileRoute: (spec) => {
      api.route({
        ...spec,
        tags: spec.tags ?? ['files'],
        security: ['bearerAuth'],
        before: [...deps.signedIn, ...(spec.before ?? [])],
        rateLimited: true,
      });
    },
  };
}

export function caller(req: Request): { userId: string; tenant: ResolvedTenant } {
  if (!req.user) throw new UnauthorizedError();
  return { userId: req.user.id, tenant: requestTenant(req) };
}

export const fileNotFound = {
  description: 'No such file in the tenant, or the caller may not see it',
  schema: ErrorBodyDto,
};
export const fileForbidden = {
  description: 'The caller sees the file but may not do this',
  schema: ErrorBodyDto,
};
