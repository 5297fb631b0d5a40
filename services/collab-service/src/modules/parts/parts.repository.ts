import type { ListPartsQuery, PartDomain } from '@hwp/contracts';
import { entityRows, NotFoundError, newId } from '@hwp/platform';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { PartEntity, PartHistoryEntity, PartVersionEntity } from './part.entity';
import { COUNT_BOUND, partSearchSql } from './parts-search-sql';

/** A row of a search page: a part's columns (all null past the last page) and its creator's username. */
type PageRow = Record<string, unknown> & { search_total?: number; created_by_username: string | null };

/**
 * The parts of one workspace, their versions, audit history and numbering counters. Every part is
 * reached through the workspace's scope; versions and history only through a part found there.
 */
export class PartsRepository {
  private readonly parts: WorkspaceScopedRepository<PartEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.parts = scope.repo(PartEntity);
  }

  private get manager() {
    return this.scope.manager;
  }

  /** A `SELECT p.*` row of parts as the entity. */
  private get fromRow() {
    return entityRows(this.manager.connection, PartEntity);
  }

  /** The part, in this workspace only (another workspace's part is 404). */
  async findInWorkspace(partId: string): Promise<PartEntity> {
    const part = await this.parts.findOne({ id: partId });
    if (!part) throw new NotFoundError('Part not found');
    return part;
  }

  /** The part, locked until the transaction ends (writers of one part queue). */
  async lockForUpdate(partId: string): Promise<PartEntity> {
    const part = await this.parts.findOne({ id: partId }, { lock: true });
    if (!part) throw new NotFoundError('Part not found');
    return part;
  }

  /**
   * A page of the search of section 4.6 (the statements: partSearchSql). The total is exact up to
   * COUNT_BOUND matches (or always, with `count=exact`); above it, the planner's estimate, flagged
   * by `exact: false`: an exact count of a common word reads every match.
   */
  async search(
    query: ListPartsQuery,
  ): Promise<{ rows: PartEntity[]; total: number; exact: boolean; names: Map<string, string> }> {
    const sql = partSearchSql(this.scope.id, query);
    const { params, offset, pageSize } = sql;
    let rows: PageRow[] = await this.manager.query(sql.first, params);
    const n = rows[0].search_total as number;
    if (sql.filtered && n > COUNT_BOUND) rows = await this.manager.query(sql.common, params);
    const found = rows.filter((row) => row.id !== null);
    const parts = found.map(this.fromRow);
    // The presenter names each part's creator.
    const names = new Map(
      found.flatMap((row) =>
        row.created_by_username === null ? [] : [[row.created_by as string, row.created_by_username]],
      ),
    );
    if (query.count === 'exact' || n <= COUNT_BOUND) return { rows: parts, total: n, exact: true, names };
    // A page cut short is the last one: the total is known.
    if (parts.length > 0 && parts.length < pageSize)
      return { rows: parts, total: offset + parts.length, exact: true, names };
    const [plan]: { 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }[] = await this.manager.query(
      sql.estimate,
      params,
    );
    // Never below what was counted, nor below the rows this page reached; past the last page (no
    // rows), never above the rows before it.
    const planned = Math.max(Math.round(plan['QUERY PLAN'][0].Plan['Plan Rows']), n);
    const estimate =
      parts.length === 0 ? Math.max(n, Math.min(planned, offset)) : Math.max(planned, offset + parts.length);
    return { rows: parts, total: estimate, exact: false, names };
  }

  insert(row: Omit<PartEntity, 'workspaceId'>): Promise<PartEntity> {
    return this.parts.insert(row);
  }

  save(part: PartEntity): Promise<PartEntity> {
    return this.parts.save(part);
  }

  /** Whether the workspace has the part number, case-insensitively. */
  async numberTaken(partNumber: string): Promise<boolean> {
    const rows: unknown[] = await this.manager.query(
      'SELECT 1 FROM parts WHERE workspace_id = $1 AND lower(part_number) = lower($2) LIMIT 1',
      [this.scope.id, partNumber],
    );
    return rows.length > 0;
  }

  /** The domain's next counter value; the counter row stays locked until commit. */
  async nextNumber(domain: PartDomain): Promise<number> {
    const [{ last_value }]: { last_value: string }[] = await this.manager.query(
      `INSERT INTO part_number_counters (workspace_id, domain, last_value) VALUES ($1, $2, 1)
       ON CONFLICT (workspace_id, domain) DO UPDATE SET last_value = part_number_counters.last_value + 1
       RETURNING last_value`,
      [this.scope.id, domain],
    );
    return Number(last_value);
  }

  /** Moves the domain's counter to at least `value`. */
  async advanceCounter(domain: PartDomain, value: number): Promise<void> {
    await this.manager.query(
      `INSERT INTO part_number_counters (workspace_id, domain, last_value) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, domain) DO UPDATE SET last_value = GREATEST(part_number_counters.last_value, EXCLUDED.last_value)`,
      [this.scope.id, domain, value],
    );
  }

  /** The part's versions, newest first. */
  versionsOf(part: PartEntity): Promise<PartVersionEntity[]> {
    return this.manager.find(PartVersionEntity, {
      where: { partId: part.id },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  /** One version of the part, locked until the transaction ends. */
  async lockVersion(part: PartEntity, versionId: string): Promise<PartVersionEntity> {
    const row = await this.manager.findOne(PartVersionEntity, {
      where: { id: versionId, partId: part.id },
      lock: { mode: 'pessimistic_write' },
    });
    if (!row) throw new NotFoundError('Version not found');
    return row;
  }

  async revisionTaken(part: PartEntity, revision: string): Promise<boolean> {
    const rows: unknown[] = await this.manager.query(
      'SELECT 1 FROM part_versions WHERE part_id = $1 AND lower(revision) = lower($2) LIMIT 1',
      [part.id, revision],
    );
    return rows.length > 0;
  }

  async saveVersion(row: PartVersionEntity): Promise<void> {
    await this.manager.save(PartVersionEntity, row);
  }

  /** The part's audit history, oldest first. */
  async historyOf(part: PartEntity): Promise<PartHistoryEntity[]> {
    const stored = await this.manager.find(PartHistoryEntity, {
      where: { partId: part.id },
      order: { at: 'ASC', id: 'ASC' },
    });
    return part.importId ? [importCreation(part, part.importId, stored), ...stored] : stored;
  }

  /**
   * Appends to the part's audit history (in the scope's transaction), stamped when written: after the
   * part's row lock, so a part's entries are in the order its changes were made (a transaction's
   * start time is not: another change may commit between it and the lock).
   */
  async appendHistory(
    part: PartEntity,
    actorId: string,
    action: string,
    changes: Record<string, unknown>,
  ): Promise<void> {
    await this.manager.query(
      'INSERT INTO part_history (id, part_id, actor, at, action, changes) VALUES ($1, $2, $3, clock_timestamp(), $4, $5)',
      [newId(), part.id, actorId, action, JSON.stringify(changes)],
    );
  }
}

/**
 * The `import.created` entry of a part an import created, from the part row (the import and row it
 * names, its creator and creation time) rather than a stored row. It has the part's id. The values
 * it was created with are the current ones unless a later entry changed them: then the first such
 * change's `from` (every change of a part is recorded with its previous value).
 */
function importCreation(part: PartEntity, importId: string, later: PartHistoryEntity[]): PartHistoryEntity {
  const created = (field: 'name' | 'domain' | 'lifecycle'): unknown => {
    for (const entry of later) {
      const change = entry.changes[field] as { from?: unknown } | undefined;
      if (change && typeof change === 'object' && 'from' in change) return change.from;
    }
    return part[field];
  };
  return Object.assign(new PartHistoryEntity(), {
    id: part.id,
    partId: part.id,
    actor: part.createdBy,
    at: part.createdAt,
    action: 'import.created',
    changes: {
      partNumber: part.partNumber,
      name: created('name'),
      domain: created('domain'),
      lifecycle: created('lifecycle'),
      import: { id: importId, row: part.importRow },
    },
  });
}
