import type { TenantRole } from '@hwp/contracts';
import { currentContext, ForbiddenError, UnauthorizedError, ValidationError } from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import type { DataSource } from 'typeorm';
import { UserEntity } from '../auth/user.entity';
import { TenantScope } from './tenant-scope';
import type { TenantsService } from './tenants.service';

/** The tenant a request acts in (section 5.1.4), set by `resolveTenant`. */
export interface ResolvedTenant {
  id: string;
  role: TenantRole;
  /** Tenant-scoped repositories of this tenant (the only way to reach tenant-owned rows). */
  scope: TenantScope;
}

declare global {
  namespace Express {
    interface Request {
      tenant?: ResolvedTenant;
    }
  }
}

export const TENANT_HEADER = 'x-tenant-id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function requestTenant(req: Request): ResolvedTenant {
  if (!req.tenant) throw new Error('resolveTenant did not run for this route');
  return req.tenant;
}

/**
 * Resolves the tenant of an authenticated request, in the order of section 5.1.4: the
 * `X-Tenant-ID` header (403 when the caller is not a member), the user's default tenant, the first
 * tenant they joined. A user left without any tenant gets a personal one. The resolved id is echoed
 * in the `X-Tenant-ID` response header and put in the request context (logs).
 */
export function createTenantResolver(dataSource: DataSource, tenants: TenantsService): RequestHandler {
  return async (req, res, next) => {
    if (!req.user) throw new UnauthorizedError();
    const userId = req.user.id;
    const manager = dataSource.manager;
    const header = req.get(TENANT_HEADER);
    let resolved: { id: string; role: TenantRole } | null = null;
    if (header !== undefined) {
      if (!UUID.test(header)) {
        throw new ValidationError('X-Tenant-ID must be a tenant id', [
          { field: 'X-Tenant-ID', message: 'must be a UUID' },
        ]);
      }
      const role = await tenants.roleOf(manager, userId, header.toLowerCase());
      if (!role) throw new ForbiddenError('You are not a member of the tenant named by X-Tenant-ID');
      resolved = { id: header.toLowerCase(), role };
    } else {
      const user = await manager.findOneBy(UserEntity, { id: userId });
      if (!user) throw new UnauthorizedError('The account no longer exists');
      resolved = await tenants.fallbackTenant(manager, user);
      if (!resolved) {
        resolved = await dataSource.transaction(async (tx) => {
          await tenants.ensurePersonalTenant(tx, user);
          return tenants.fallbackTenant(tx, user);
        });
      }
    }
    if (!resolved) throw new ForbiddenError('No tenant available');
    req.tenant = { ...resolved, scope: new TenantScope(manager, resolved.id) };
    res.setHeader('X-Tenant-ID', resolved.id);
    const context = currentContext();
    if (context) context.tenantId = resolved.id;
    next();
  };
}
