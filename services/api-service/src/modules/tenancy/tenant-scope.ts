import { Ownership, ScopedRepository } from '@hwp/platform';
import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';

/** A row that belongs to one tenant. */
export interface TenantOwned extends ObjectLiteral {
  tenantId: string;
}

const tenantOwned = new Ownership('tenantId', 'tenant-owned');

/**
 * Declares an entity tenant-owned: it is read and written only through a TenantScope. A test walks
 * every entity with a `tenant_id` column and checks it is registered here.
 */
export function registerTenantOwned(entity: EntityTarget<TenantOwned>): void {
  tenantOwned.register(entity);
}

export function isTenantOwned(entity: EntityTarget<ObjectLiteral>): boolean {
  return tenantOwned.has(entity);
}

/** Every query carries `tenant_id = <the scope's tenant>` (the platform's ScopedRepository). */
export type TenantScopedRepository<E extends TenantOwned> = ScopedRepository<E, 'tenantId'>;

/** Tenant-scoped repositories of one tenant on one manager (a transaction's or the data source's). */
export class TenantScope {
  constructor(
    private readonly manager: EntityManager,
    readonly tenantId: string,
  ) {}

  /** The same tenant on another manager (inside a transaction). */
  in(manager: EntityManager): TenantScope {
    return manager === this.manager ? this : new TenantScope(manager, this.tenantId);
  }

  repo<E extends TenantOwned>(entity: EntityTarget<E>): TenantScopedRepository<E> {
    return new ScopedRepository(this.manager, entity, tenantOwned, this.tenantId);
  }
}
