import { ErrorBodyDto } from '@hwp/contracts';
import type { ApiRouter, RawQuery } from '@hwp/platform';
import type { RequestHandler } from 'express';
import { type UserRouteSpec, userRoute } from '../../tenancy/tenant-route';
import type { TenantsService } from '../../tenancy/tenants.service';
import type { ProfileService } from '../profile.service';
import type { TenantInvitationsService } from '../tenant-invitations.service';

export interface TenantRouteDeps {
  tenants: TenantsService;
  invitations: TenantInvitationsService;
  profiles: ProfileService;
  /** authenticate, the standard rate limit, then tenant resolution. */
  signedIn: RequestHandler[];
}

/** A signed-in, rate-limited route of the tenants feature. */
export type SignedInRoute = <Body = unknown, Query = RawQuery>(spec: UserRouteSpec<Body, Query>) => void;

export interface TenantRouting extends TenantRouteDeps {
  signedInRoute: SignedInRoute;
}

export function tenantRouting(api: ApiRouter, deps: TenantRouteDeps): TenantRouting {
  return {
    ...deps,
    signedInRoute: (spec) => userRoute(api, deps.signedIn, spec),
  };
}

export const notFound = { description: 'No such tenant among the caller’s', schema: ErrorBodyDto };
export const forbidden = {
  description: 'The caller’s role is too low, or X-Tenant-ID names a tenant they are not in',
  schema: ErrorBodyDto,
};
