import type { PartDomain } from '@hwp/contracts';
import { ConflictError, CopyFeed, CopyText, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { PartFieldValues, PlannedRow, StoredPart } from './part-import-plan';

/**
 * Set-based SQL of the parts import: new parts go in with COPY (each names the import and the row that
 * created it: their `import.created` history entry is read from that, see PartsRepository.historyOf),
 * updates and their history rows as one statement per batch with the rows as one JSON parameter
 * (`jsonb_to_recordset`).
 */

/** Rows per statement: large enough to amortise the round trip, small enough for one JSON parameter. */
const IMPORT_BATCH_ROWS = 2_000;

const PART_COLUMNS = `
  name text, description text, domain text, uom text, lifecycle text, tags jsonb, attributes jsonb,
  manufacturer_name text, manufacturer_part_number text, unit_cost numeric, currency text,
  rohs_compliant boolean, reach_compliant boolean, conflict_minerals text`;

interface StoredRow {
  id: string;
  part_number: string;
  name: string;
  description: string;
  domain: StoredPart['domain'];
  uom: string;
  lifecycle: StoredPart['lifecycle'];
  tags: string[];
  attributes: Record<string, unknown>;
  manufacturer_name: string | null;
  manufacturer_part_number: string | null;
  unit_cost: string | null;
  currency: string | null;
  rohs_compliant: boolean | null;
  reach_compliant: boolean | null;
  conflict_minerals: string | null;
  version: string;
}

/**
 * What a failed write tells the importer: a part number of the file that someone took meanwhile (a
 * part created while the import ran) is a 409 naming it; anything else as it came.
 */
function writeError(error: unknown): unknown {
  const failed = error as { code?: unknown; constraint?: unknown; detail?: unknown } | null;
  if (failed?.code !== '23505' || failed.constraint !== 'parts_workspace_number_key') return error;
  const taken =
    typeof failed.detail === 'string'
      ? /\)=\([^,]+, (.+)\) already exists/.exec(failed.detail)?.[1]
      : undefined;
  return new ConflictError(
    `A part numbered ${taken ? `"${taken}" (compared regardless of case)` : 'as one of this file'} was created by someone else while the import ran; nothing was imported. Import the file again to update that part.`,
  );
}

/** Whether the workspace has any committed part (on a pooled connection: the import's own are not seen). */
export async function hasParts(manager: EntityManager, workspaceId: string): Promise<boolean> {
  const [row]: { found: boolean }[] = await manager.query(
    'SELECT EXISTS (SELECT 1 FROM parts WHERE workspace_id = $1) AS found',
    [workspaceId],
  );
  return row.found;
}

/** The stored parts of the workspace with these lower-case part numbers, by lower-case number. */
export async function storedParts(
  manager: EntityManager,
  workspaceId: string,
  keys: string[],
): Promise<Map<string, StoredPart>> {
  const found = new Map<string, StoredPart>();
  for (let start = 0; start < keys.length; start += IMPORT_BATCH_ROWS) {
    // One unique-index probe per key (LATERAL ... LIMIT 1 keeps the planner from folding it into a
    // scan of the whole workspace, which it picks when its statistics predate the rows this import's
    // own transaction has just added: 15 ms a batch at 50,000 new parts instead of 1 ms).
    const rows: StoredRow[] = await manager.query(
      `SELECT p.* FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (
         SELECT id, part_number, name, description, domain, uom, lifecycle, tags, attributes, manufacturer_name,
                manufacturer_part_number, unit_cost, currency, rohs_compliant, reach_compliant, conflict_minerals,
                updated_at::text AS version
           FROM parts WHERE workspace_id = $1 AND lower(part_number) = k.key LIMIT 1) p`,
      [workspaceId, keys.slice(start, start + IMPORT_BATCH_ROWS)],
    );
    for (const r of rows) {
      found.set(r.part_number.toLowerCase(), {
        id: r.id,
        partNumber: r.part_number,
        name: r.name,
        description: r.description,
        domain: r.domain,
        uom: r.uom,
        lifecycle: r.lifecycle,
        tags: r.tags,
        attributes: r.attributes,
        manufacturerName: r.manufacturer_name,
        manufacturerPartNumber: r.manufacturer_part_number,
        unitCost: r.unit_cost === null ? null : Number(r.unit_cost),
        currency: r.currency,
        rohsCompliant: r.rohs_compliant,
        reachCompliant: r.reach_compliant,
        conflictMinerals: r.conflict_minerals,
        version: r.version,
      });
    }
  }
  return found;
}

const columnsOf = (part: PartFieldValues) => ({
  name: part.name,
  description: part.description,
  domain: part.domain,
  uom: part.uom,
  lifecycle: part.lifecycle,
  tags: part.tags,
  attributes: part.attributes,
  manufacturer_name: part.manufacturerName,
  manufacturer_part_number: part.manufacturerPartNumber,
  unit_cost: part.unitCost,
  currency: part.currency,
  rohs_compliant: part.rohsCompliant,
  reach_compliant: part.reachCompliant,
  conflict_minerals: part.conflictMinerals,
});

type Create = Extract<PlannedRow, { kind: 'create' }>;
type Update = Extract<PlannedRow, { kind: 'update' }>;

export interface WriteContext {
  workspaceId: string;
  actorId: string;
  importId: string;
  at: Date;
}

const PARTS_COPY = `COPY parts (id, workspace_id, part_number, name, description, domain, uom, lifecycle, tags,
  attributes, manufacturer_name, manufacturer_part_number, unit_cost, currency, rohs_compliant, reach_compliant,
  conflict_minerals, created_by, created_at, updated_at, import_id, import_row) FROM STDIN`;

/** Batches that may wait to be written at once: one being written, one filling behind it. */
const WRITE_SLOTS = 2;
/**
 * Rows per write (a batch of COPY text for new parts, one statement of changed ones): enough to
 * amortise the statements, small enough to overlap the checks.
 */
const WRITE_ROWS = 2_000;

/**
 * Writes an import's rows on its transaction's connection, batch after batch, while the caller
 * checks the next rows: new parts go into one COPY kept open (a CopyFeed) from buffers that are
 * reused (rows waiting for the database are WRITE_SLOTS buffers, not objects the garbage collector
 * would move to its old generation); changed parts with `updateParts`, and numbering counters, after
 * that COPY ends (a later batch's new parts open another; counters only when a domain's rule is first
 * used and at the end). `add` waits while WRITE_SLOTS batches are
 * waiting. After a failed write nothing more is written and every later call throws its error.
 */
export class PartWriter {
  private chain: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;
  /** COPY text buffers of new parts not in use. */
  private readonly idle: CopyText[] = [];
  private made = 0;
  private released: (() => void) | undefined;
  /** `context.at` as COPY text, made once. */
  private readonly at: string;
  private filling: { parts: CopyText; updates: Update[]; highest: Map<PartDomain, number> } | undefined;
  /** The COPY of new parts open on the transaction's connection, fed batch after batch. */
  private feed: CopyFeed | undefined;
  /** Per domain with a numbering rule: the highest sequence this import used, and its counter so far. */
  private readonly highest = new Map<PartDomain, number>();
  private readonly advancedTo = new Map<PartDomain, number>();

  constructor(
    private readonly manager: EntityManager,
    private readonly context: WriteContext,
    /** Moves the numbering counters past a batch's highest new numbers (per domain). */
    private readonly advanceCounters: (highest: Map<PartDomain, number>) => Promise<void>,
  ) {
    this.at = context.at.toISOString();
  }

  /**
   * Adds checked rows: new parts (with the highest numbers they use per domain) go into the COPY
   * text being filled, sent once it holds WRITE_ROWS parts; changed parts go with it.
   */
  async add(creates: Create[], updates: Update[], highest: Map<PartDomain, number>): Promise<void> {
    if (!this.filling) this.filling = { parts: await this.reserve(), updates: [], highest: new Map() };
    const { parts } = this.filling;
    for (const u of updates) this.filling.updates.push(u);
    for (const [domain, value] of highest)
      if (value > (this.filling.highest.get(domain) ?? 0)) this.filling.highest.set(domain, value);
    const { context, at } = this;
    for (const c of creates) {
      const id = newId();
      const p = c.part;
      parts.add([
        id,
        context.workspaceId,
        c.partNumber,
        p.name,
        p.description,
        p.domain,
        p.uom,
        p.lifecycle,
        p.tags,
        p.attributes,
        p.manufacturerName,
        p.manufacturerPartNumber,
        p.unitCost,
        p.currency,
        p.rohsCompliant,
        p.reachCompliant,
        p.conflictMinerals,
        context.actorId,
        at,
        at,
        context.importId,
        c.row,
      ]);
    }
    if (parts.rows + this.filling.updates.length >= WRITE_ROWS) this.send();
  }

  /** Sends the rows being filled to be written after those before them. */
  private send(): void {
    const filling = this.filling;
    if (!filling) return;
    this.filling = undefined;
    const { parts, updates, highest } = filling;
    this.chain = this.chain.then(async () => {
      try {
        if (this.failure) return;
        // Statements need the connection: the open COPY ends first. A domain's counter is moved
        // when the import first uses its rule (its row stays locked until commit, so creates in the
        // domain wait for the import) and once more at the end, to the highest number used.
        const first = new Map<PartDomain, number>();
        for (const [domain, value] of highest) {
          if (!this.highest.has(domain)) first.set(domain, value);
          if (value > (this.highest.get(domain) ?? 0)) this.highest.set(domain, value);
        }
        if (first.size > 0) {
          await this.endFeed();
          await this.advanceCounters(first);
          for (const [domain, value] of first) this.advancedTo.set(domain, value);
        }
        if (parts.rows > 0) {
          this.feed ??= await CopyFeed.open(this.manager, PARTS_COPY);
          await this.feed.write(parts.bytes());
        }
        if (updates.length > 0) {
          await this.endFeed();
          await updateParts(this.manager, this.context, updates);
        }
      } catch (error) {
        this.failure ??= { error: writeError(error) };
      } finally {
        parts.clear();
        this.idle.push(parts);
        this.released?.();
      }
    });
  }

  /** Ends the open COPY of new parts, if any: its rows are stored once this resolves. */
  private async endFeed(): Promise<void> {
    const feed = this.feed;
    this.feed = undefined;
    await feed?.end();
  }

  /** Writes what is left, moves the counters to the highest numbers used; throws the first failure. */
  async finish(): Promise<void> {
    this.send();
    this.chain = this.chain.then(async () => {
      if (this.failure) return;
      try {
        await this.endFeed();
        const behind = new Map(
          [...this.highest].filter(([domain, value]) => value > (this.advancedTo.get(domain) ?? 0)),
        );
        if (behind.size > 0) await this.advanceCounters(behind);
      } catch (error) {
        this.failure ??= { error: writeError(error) };
      }
    });
    await this.settled();
    if (this.failure) throw this.failure.error;
  }

  /**
   * Waits for every write already sent, failed or not, and ends the open COPY (before the transaction
   * ends: a COPY left open would hold its connection).
   */
  settled(): Promise<void> {
    this.chain = this.chain.then(async () => {
      try {
        await this.endFeed();
      } catch (error) {
        this.failure ??= { error: writeError(error) };
      }
    });
    return this.chain;
  }

  private async reserve(): Promise<CopyText> {
    for (;;) {
      if (this.failure) throw this.failure.error;
      const idle = this.idle.pop();
      if (idle) return idle;
      if (this.made < WRITE_SLOTS) {
        this.made++;
        return new CopyText();
      }
      await new Promise<void>((resolve) => {
        this.released = resolve;
      });
    }
  }
}

/**
 * Updates changed parts, each only while it still has the `updated_at` the import read (409
 * otherwise: someone changed it meanwhile), and writes their `import.updated` history rows.
 */
export async function updateParts(
  manager: EntityManager,
  context: WriteContext,
  batch: Update[],
): Promise<void> {
  const rows = batch.map((u) => ({ id: u.stored.id, version: u.stored.version, ...columnsOf(u.part) }));
  const [, count]: [unknown, number] = await manager.query(
    `UPDATE parts p SET name = r.name, description = r.description, domain = r.domain, uom = r.uom,
            lifecycle = r.lifecycle, tags = ARRAY(SELECT jsonb_array_elements_text(r.tags)),
            attributes = r.attributes, manufacturer_name = r.manufacturer_name,
            manufacturer_part_number = r.manufacturer_part_number, unit_cost = r.unit_cost,
            currency = r.currency, rohs_compliant = r.rohs_compliant, reach_compliant = r.reach_compliant,
            conflict_minerals = r.conflict_minerals, updated_at = $3
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, version text, ${PART_COLUMNS})
      WHERE p.id = r.id AND p.workspace_id = $2 AND p.updated_at = r.version::timestamptz`,
    [JSON.stringify(rows), context.workspaceId, context.at],
  );
  if (count !== rows.length) {
    throw new ConflictError(
      `${rows.length - count} of the parts to update changed while the import ran; nothing was imported, import the file again`,
    );
  }
  await history(
    manager,
    context,
    'import.updated',
    batch.map((u) => ({ partId: u.stored.id, row: u.row, changes: u.changes })),
  );
}

async function history(
  manager: EntityManager,
  context: WriteContext,
  action: string,
  entries: { partId: string; row: number; changes: Record<string, unknown> }[],
): Promise<void> {
  // `import` says which import and which row of its file did it.
  const rows = entries.map((e) => ({
    id: newId(),
    part_id: e.partId,
    changes: { ...e.changes, import: { id: context.importId, row: e.row } },
  }));
  // Stamped when written (after the rows were updated, so after any change they were based on):
  // history is read in time order, and a part's values at creation are read back from it.
  await manager.query(
    `INSERT INTO part_history (id, part_id, actor, at, action, changes)
     SELECT r.id, r.part_id, $2, clock_timestamp(), $3, r.changes FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, part_id uuid, changes jsonb)`,
    [JSON.stringify(rows), context.actorId, action],
  );
}
