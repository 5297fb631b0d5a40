import { CopyFeed, CopyText, ForbiddenError } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { PartEntity, PartsService } from '../parts';
import { atLeast } from '../workspace-access/workspace-access';
import { BomAlternateEntity, type BomEntity, BomItemEntity } from './bom.entity';
import type { PlannedLine } from './bom-import-rows';
import type { BomsRepository } from './boms.repository';

/** Lines sent to the COPY at a time. */
const COPY_BATCH_ROWS = 2_000;

/**
 * Writes an applied BOM import in the caller's transaction: the missing child parts (through the
 * parts catalog), then the file's lines in place of the BOM's, then their alternates. `parts` (by
 * lower-cased part number) gains the parts created.
 */
export async function writeBomLines(
  manager: EntityManager,
  repo: BomsRepository,
  catalog: PartsService,
  actor: CollabUserEntity,
  bom: BomEntity,
  planned: PlannedLine[],
  parts: Map<string, PartEntity>,
  missing: string[],
): Promise<void> {
  const created = await catalog.createFor(
    repo.scope,
    actor,
    missing.map((partNumber) => {
      const line = planned.find((l) => l.partNumber.toLowerCase() === partNumber.toLowerCase());
      return { partNumber, name: (line?.name ?? partNumber).slice(0, 200), uom: line?.uom ?? 'each' };
    }),
    { source: 'bom-import', bomId: bom.id },
  );
  for (const part of created) parts.set(part.partNumber.toLowerCase(), part);
  const now = new Date();
  await manager.delete(BomItemEntity, { bomId: bom.id });
  // The lines go in with one COPY (a 100,000-line file is one statement's worth of bytes, not 200
  // INSERTs of 500 rows with 19 parameters each); parents come before the lines nested under them,
  // and the foreign keys are checked at the end of the statement anyway.
  const feed = await CopyFeed.open(
    manager,
    `COPY bom_items (id, bom_id, parent_item_id, child_part_id, qty, uom, refdes, notes, sort_index, attributes,
      date_from, date_to, serial_from, serial_to, lot_from, lot_to, created_at, updated_at) FROM STDIN`,
  );
  const text = new CopyText();
  const stamp = now.toISOString();
  for (let index = 0; index < planned.length; index++) {
    const line = planned[index];
    const e = line.effectivity;
    text.add([
      line.id,
      bom.id,
      line.parentId,
      parts.get(line.partNumber.toLowerCase())?.id,
      line.qty,
      line.uom,
      line.refdes,
      line.notes,
      line.sortIndex >= 0 ? line.sortIndex : index,
      line.attributes,
      e.dateFrom,
      e.dateTo,
      e.serialFrom,
      e.serialTo,
      e.lotFrom,
      e.lotTo,
      stamp,
      stamp,
    ]);
    if (text.rows === COPY_BATCH_ROWS) {
      await feed.write(text.bytes());
      text.clear();
    }
  }
  if (text.rows > 0) await feed.write(text.bytes());
  await feed.end();
  const alternates = planned.flatMap((line) =>
    line.alternates.map((a, position) => ({
      itemId: line.id,
      partId: parts.get(a.partNumber.toLowerCase())?.id as string,
      position,
      approval: a.approval,
      rationale: '',
      proposedBy: actor.id,
      approvedBy: a.approval === 'approved' ? actor.id : null,
    })),
  );
  if (alternates.length > 0) await manager.insert(BomAlternateEntity, alternates);
  if (alternates.some((a) => a.approval === 'approved') && !atLeast(repo.scope.role, 'manager'))
    throw new ForbiddenError('Only a manager or owner may approve an alternate');
}
