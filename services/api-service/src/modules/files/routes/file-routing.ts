import { ErrorBodyDto } from '@hwp/contracts';
import type { ApiRouter, RawQuery } from '@hwp/platform';
import type { RequestHandler } from 'express';
import { type TenantRouteSpec, tenantRoute } from '../../tenancy/tenant-route';
import type { FilesService } from '../files.service';

export interface FileRouteDeps {
  files: FilesService;
  /** authenticate, the standard rate limit, then tenant resolution. */
  signedIn: RequestHandler[];
}

/** A signed-in, rate-limited route in the resolved tenant. */
export type FileRoute = <Body = unknown, Query = RawQuery>(spec: TenantRouteSpec<Body, Query>) => void;

export interface FileRouting extends FileRouteDeps {
  fileRoute: FileRoute;
  api: ApiRouter;
}

export function fileRouting(api: ApiRouter, deps: FileRouteDeps): FileRouting {
  return {
    ...deps,
    api,
    fileRoute: (spec) => tenantRoute(api, deps.signedIn, { ...spec, tags: spec.tags ?? ['files'] }),
  };
}

export const fileNotFound = {
  description: 'No such file in the tenant, or the caller may not see it',
  schema: ErrorBodyDto,
};
export const fileForbidden = {
  description: 'The caller sees the file but may not do this',
  schema: ErrorBodyDto,
};
