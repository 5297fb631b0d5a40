import { ConflictError, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { PartFieldValues, PlannedRow, StoredPart } from './part-import-plan';

/**
 * Set-based SQL of the parts import: every statement handles a batch of rows passed as one JSON
 * parameter (`jsonb_to_recordset`), so 100,000 rows take a few dozen round trips, not 100,000.
 */

/** Rows per statement: large enough to amortise the round trip, small enough for one JSON parameter. */
export const IMPORT_BATCH_ROWS = 2_000;

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
    const rows: StoredRow[] = await manager.query(
      `SELECT id, part_number, name, description, domain, uom, lifecycle, tags, attributes, manufacturer_name,
              manufacturer_part_number, unit_cost, currency, rohs_compliant, reach_compliant, conflict_minerals,
              updated_at::text AS version
         FROM parts WHERE workspace_id = $1 AND lower(part_number) = ANY($2::text[])`,
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

/**
 * Inserts new parts and their `import.created` history rows, in one statement: the history is built
 * in SQL from the same rows, so the batch crosses the wire once. `json` is `newPartsJson(batch)`.
 */
export async function insertParts(
  manager: EntityManager,
  context: WriteContext,
  json: string,
): Promise<void> {
  await manager.query(
    `WITH r AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, history_id uuid, row int, part_number text, ${PART_COLUMNS})
     ), inserted AS (
       INSERT INTO parts (id, workspace_id, part_number, name, description, domain, uom, lifecycle, tags, attributes,
                          manufacturer_name, manufacturer_part_number, unit_cost, currency, rohs_compliant,
                          reach_compliant, conflict_minerals, created_by, created_at, updated_at)
       SELECT r.id, $2, r.part_number, r.name, r.description, r.domain, r.uom, r.lifecycle,
              ARRAY(SELECT jsonb_array_elements_text(r.tags)), r.attributes, r.manufacturer_name,
              r.manufacturer_part_number, r.unit_cost, r.currency, r.rohs_compliant, r.reach_compliant,
              r.conflict_minerals, $3, $4, $4
         FROM r
       RETURNING id
     )
     INSERT INTO part_history (id, part_id, actor, at, action, changes)
     SELECT r.history_id, r.id, $3, $4, 'import.created',
            jsonb_build_object('partNumber', r.part_number, 'name', r.name, 'domain', r.domain,
                               'lifecycle', r.lifecycle, 'import', jsonb_build_object('id', $5::text, 'row', r.row))
       FROM r JOIN inserted USING (id)`,
    [json, context.workspaceId, context.actorId, context.at, context.importId],
  );
}

/** The batch as the JSON the statement reads (built apart, so only the text waits on the database). */
export function newPartsJson(batch: Create[]): string {
  return JSON.stringify(
    batch.map((c) => ({
      id: newId(),
      history_id: newId(),
      row: c.row,
      part_number: c.partNumber,
      ...columnsOf(c.part),
    })),
  );
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
