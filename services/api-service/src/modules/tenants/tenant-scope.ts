import type { EntityManager, EntityTarget, FindOptionsOrder, FindOptionsWhere, ObjectLiteral } from 'typeorm';

/** A row that belongs to one tenant. */
export interface TenantOwned extends ObjectLiteral {
  tenantId: string;
}

const tenantOwnedEntities = new Set<EntityTarget<ObjectLiteral>>();

/**
 * Declares an entity tenant-owned: it is read and written only through a TenantScope. A test walks
 * every entity with a `tenant_id` column and checks it is registered here.
 */
export function registerTenantOwned(entity: EntityTarget<TenantOwned>): void {
  tenantOwnedEntities.add(entity);
}

export function isTenantOwned(entity: EntityTarget<ObjectLiteral>): boolean {
  return tenantOwnedEntities.has(entity);
}

type Where<E> = Omit<FindOptionsWhere<E>, 'tenantId'>;

/**
 * The one way to touch tenant-owned rows: every read, count, update and delete it issues carries
 * `tenant_id = <the scope's tenant>`, and every insert is stamped with it. A route therefore
 * cannot forget the filter: it never holds an unscoped repository of a tenant-owned entity.
 */
export class TenantScopedRepository<E extends TenantOwned> {
  constructor(
    private readonly manager: EntityManager,
    private readonly entity: EntityTarget<E>,
    readonly tenantId: string,
  ) {
    if (!isTenantOwned(entity)) throw new Error('entity is not registered as tenant-owned');
  }

  private scoped(where: Where<E> = {} as Where<E>): FindOptionsWhere<E> {
    return { ...where, tenantId: this.tenantId } as FindOptionsWhere<E>;
  }

  find(options: { where?: Where<E>; order?: FindOptionsOrder<E>; skip?: number; take?: number } = {}) {
    return this.manager.find(this.entity, { ...options, where: this.scoped(options.where) });
  }

  findAndCount(
    options: { where?: Where<E>; order?: FindOptionsOrder<E>; skip?: number; take?: number } = {},
  ) {
    return this.manager.findAndCount(this.entity, { ...options, where: this.scoped(options.where) });
  }

  findOne(where: Where<E>, options: { lock?: boolean } = {}): Promise<E | null> {
    return this.manager.findOne(this.entity, {
      where: this.scoped(where),
      ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  count(where: Where<E> = {} as Where<E>): Promise<number> {
    return this.manager.count(this.entity, { where: this.scoped(where) });
  }

  async insert(row: Omit<E, 'tenantId'>): Promise<E> {
    const entity = this.manager.create(this.entity, { ...row, tenantId: this.tenantId } as unknown as E);
    await this.manager.insert(this.entity, entity);
    return entity;
  }

  /** Returns the number of rows changed (0 when the row is not in this tenant). */
  async update(where: Where<E>, patch: Partial<Omit<E, 'tenantId'>>): Promise<number> {
    const result = await this.manager.update(this.entity, this.scoped(where), patch as never);
    return result.affected ?? 0;
  }

  async delete(where: Where<E>): Promise<number> {
    const result = await this.manager.delete(this.entity, this.scoped(where));
    return result.affected ?? 0;
  }
}

/** Tenant-scoped repositories of one tenant on one manager (a transaction's or the data source's). */
export class TenantScope {
  constructor(
    private readonly manager: EntityManager,
    readonly tenantId: string,
  ) {}

  repo<E extends TenantOwned>(entity: EntityTarget<E>): TenantScopedRepository<E> {
    return new TenantScopedRepository(this.manager, entity, this.tenantId);
  }
}
