import type { EntityManager, EntityTarget, FindOptionsOrder, FindOptionsWhere, ObjectLiteral } from 'typeorm';

/** A filter on an owned entity: every field but the owner column, which the scope sets. */
export type ScopedWhere<E, K extends string> = Omit<FindOptionsWhere<E>, K>;

export interface ScopedFindOptions<E, K extends string> {
  where?: ScopedWhere<E, K>;
  order?: FindOptionsOrder<E>;
  skip?: number;
  take?: number;
}

/**
 * Which entities belong to an owner (a tenant, a workspace): they are read and written only through
 * a scope of that owner. Tests walk every entity with the owner's column and check it is registered.
 */
export class Ownership<K extends string> {
  private readonly owned = new Set<EntityTarget<ObjectLiteral>>();

  /** `label` names the kind of row in errors (`tenant-owned`, `workspace-owned`). */
  constructor(
    readonly column: K,
    readonly label: string,
  ) {}

  register(entity: EntityTarget<ObjectLiteral & Record<K, string>>): void {
    this.owned.add(entity);
  }

  has(entity: EntityTarget<ObjectLiteral>): boolean {
    return this.owned.has(entity);
  }
}

/**
 * The one way to touch owned rows: every read, count, update and delete it issues carries
 * `<owner column> = <the scope's owner>`, and every insert is stamped with it. Code holding it
 * cannot forget the filter: it never holds an unscoped repository of an owned entity.
 */
export class ScopedRepository<E extends ObjectLiteral & Record<K, string>, K extends string> {
  constructor(
    private readonly manager: EntityManager,
    private readonly entity: EntityTarget<E>,
    ownership: Ownership<K>,
    readonly ownerId: string,
    private readonly column: K = ownership.column,
  ) {
    if (!ownership.has(entity)) throw new Error(`entity is not registered as ${ownership.label}`);
  }

  private scoped(where: ScopedWhere<E, K> = {} as ScopedWhere<E, K>): FindOptionsWhere<E> {
    return { ...where, [this.column]: this.ownerId } as FindOptionsWhere<E>;
  }

  find(options: ScopedFindOptions<E, K> = {}): Promise<E[]> {
    return this.manager.find(this.entity, { ...options, where: this.scoped(options.where) });
  }

  findAndCount(options: ScopedFindOptions<E, K> = {}): Promise<[E[], number]> {
    return this.manager.findAndCount(this.entity, { ...options, where: this.scoped(options.where) });
  }

  /** One row of this owner; with `lock`, locked FOR UPDATE until the transaction ends. */
  findOne(where: ScopedWhere<E, K>, options: { lock?: boolean } = {}): Promise<E | null> {
    return this.manager.findOne(this.entity, {
      where: this.scoped(where),
      ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  count(where: ScopedWhere<E, K> = {} as ScopedWhere<E, K>): Promise<number> {
    return this.manager.count(this.entity, { where: this.scoped(where) });
  }

  async insert(row: Omit<E, K>): Promise<E> {
    const entity = this.manager.create(this.entity, { ...row, [this.column]: this.ownerId } as unknown as E);
    await this.manager.insert(this.entity, entity);
    return entity;
  }

  /** Writes a row read through this scope back (a row of another owner is refused, not moved). */
  async save(row: E): Promise<E> {
    if (row[this.column] !== this.ownerId) throw new Error(`row is not owned by ${this.ownerId}`);
    return this.manager.save(this.entity, row);
  }

  /** Returns the number of rows changed (0 when the row is not this owner's). */
  async update(where: ScopedWhere<E, K>, patch: Partial<Omit<E, K>>): Promise<number> {
    const result = await this.manager.update(this.entity, this.scoped(where), patch as never);
    return result.affected ?? 0;
  }

  async delete(where: ScopedWhere<E, K>): Promise<number> {
    const result = await this.manager.delete(this.entity, this.scoped(where));
    return result.affected ?? 0;
  }
}
