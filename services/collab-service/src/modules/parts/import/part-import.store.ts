import { ConflictError, copyLine, copyRows, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { PartFieldValues, PlannedRow, StoredPart } from './part-import-plan';

/**
 * Set-based SQL of the parts import: new parts and their history go in with COPY, updates as one
 * statement per batch with the rows as one JSON parameter (`jsonb_to_recordset`).
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
  conflict_minerals, created_by, created_at, updated_at) FROM STDIN`;
const HISTORY_COPY = 'COPY part_history (id, part_id, actor, at, action, changes) FROM STDIN';

/**
 * Writes new parts, then their `import.created` history rows, with COPY on the import's transaction.
 * The COPY text is made as the connection takes it, so no line outlives its chunk.
 */
export async function insertParts(
  manager: EntityManager,
  context: WriteContext,
  batch: Create[],
): Promise<void> {
  const ids = batch.map(() => newId());
  await copyRows(
    manager,
    PARTS_COPY,
    lines(batch, (c, i) => {
      const p = c.part;
      return [
        ids[i],
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
        context.at,
        context.at,
      ];
    }),
  );
  await copyRows(
    manager,
    HISTORY_COPY,
    lines(batch, (c, i) => [
      newId(),
      ids[i],
      context.actorId,
      context.at,
      'import.created',
      {
        partNumber: c.partNumber,
        name: c.part.name,
        domain: c.part.domain,
        lifecycle: c.part.lifecycle,
        import: { id: context.importId, row: c.row },
      },
    ]),
  );
}

function* lines<T>(list: T[], values: (item: T, index: number) => unknown[]): Generator<string> {
  for (let i = 0; i < list.length; i++) yield copyLine(values(list[i], i));
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
  await manager.query(
    `INSERT INTO part_history (id, part_id, actor, at, action, changes)
     SELECT r.id, r.part_id, $2, $3, $4, r.changes FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, part_id uuid, changes jsonb)`,
    [JSON.stringify(rows), context.actorId, context.at, action],
  );
}
