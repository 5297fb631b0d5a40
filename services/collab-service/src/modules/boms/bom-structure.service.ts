import type {
  Bom,
  BomDiff,
  BomDiffChange,
  BomDiffLine,
  BomDiffQuery,
  DeriveMbomRequest,
  EffectivityReport,
  ValidateEffectivityRequest,
  WhereUsedList,
} from '@hwp/contracts';
import { AppError, ConflictError, NotFoundError, newId, ValidationError } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { notSubmitted } from '../parts';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { BomAlternateEntity, type BomEntity, BomItemEntity } from './bom.entity';
import type { ExpandedNode } from './bom-tree';
import { MAX_DEPTH } from './bom-tree';
import type { BomsRepository } from './boms.repository';
import type { BomsService } from './boms.service';
import { checkEffectivity, findOverlaps } from './effectivity';
import { expandRefdes, RefdesError } from './refdes';

/** A line as a diff compares it. */
interface DiffLine extends BomDiffLine {
  fields: Record<string, unknown>;
}

const EFFECTIVITY_FIELDS = ['dateFrom', 'dateTo', 'serialFrom', 'serialTo', 'lotFrom', 'lotTo'] as const;

/** Derive-MBOM, diff, effectivity checks and where-used: reads and copies across BOMs. */
/** Paths one where-used answer lists at most (413 past it). */
export const MAX_WHERE_USED_PATHS = 10_000;

/** The recursion of where-used: `up` holds every path from the part up ($1 workspace, $2 part, $3 all levels). */
const WHERE_USED_PATHS = `WITH RECURSIVE chosen AS (
         SELECT DISTINCT ON (b.assembly_part_id, b.type) b.*
         FROM boms b WHERE b.workspace_id = $1
         ORDER BY b.assembly_part_id, b.type, (b.status = 'approved') DESC, b.created_at DESC, b.id DESC
       ),
       up AS (
         SELECT c.id AS bom_id, c.assembly_part_id, c.revision, c.type, c.status, 1 AS level,
                sum(i.qty) AS qty, ARRAY[c.assembly_part_id, $2::uuid] AS parts, c.assembly_part_id = $2::uuid AS cycle
         FROM bom_items i JOIN chosen c ON c.id = i.bom_id
         WHERE i.child_part_id = $2
         GROUP BY c.id, c.assembly_part_id, c.revision, c.type, c.status
         UNION ALL
         SELECT c.id, c.assembly_part_id, c.revision, c.type, c.status, u.level + 1,
                u.qty * i.qty, c.assembly_part_id || u.parts, c.assembly_part_id = ANY(u.parts)
         FROM up u
         JOIN bom_items i ON i.child_part_id = u.assembly_part_id
         JOIN chosen c ON c.id = i.bom_id AND c.type = u.type
         WHERE $3 AND NOT u.cycle AND u.level < ${MAX_DEPTH}
       )`;

export class BomStructureService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly boms: BomsService,
  ) {}

  /**
   * Engineer+: a new manufacturing BOM of the same assembly from an engineering BOM. Lines are copied
   * with their alternates and effectivity; a phantom sub-assembly (`attributes.phantom: true`) is
   * replaced by its own lines (its document children or its BOM's), quantities multiplied through.
   */
  async deriveMbom(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    bomId: string,
    request: DeriveMbomRequest,
  ): Promise<Bom> {
    return this.dataSource.transaction(async (manager) => {
      const repo = this.boms.bomsIn(access, manager);
      const source = await repo.find(bomId);
      if (source.type !== 'engineering')
        throw new ConflictError('A manufacturing BOM is derived from an engineering BOM', { field: 'type' });
      const revision = request.revision.trim();
      await repo.lockAssembly(source.assemblyPartId);
      if (await repo.findRevision(source.assemblyPartId, 'manufacturing', revision)) {
        throw new ConflictError(`A manufacturing BOM revision ${revision} of this assembly exists`, {
          field: 'revision',
        });
      }
      const assembly = (await repo.partsById([source.assemblyPartId])).get(source.assemblyPartId);
      const tree = await this.boms.expand(manager, source, assembly?.partNumber ?? '');
      const now = new Date();
      const target = await repo.insert({
        id: newId(),
        assemblyPartId: source.assemblyPartId,
        assemblyVersionId: source.assemblyVersionId,
        type: 'manufacturing',
        revision,
        status: 'draft',
        changeNote: request.changeNote ?? `Derived from engineering BOM revision ${source.revision}`,
        sourceBomId: source.id,
        createdBy: actor.id,
        createdAt: now,
        updatedAt: now,
        ...notSubmitted(),
      });
      const copies: { node: ExpandedNode; id: string; parentItemId: string | null; qty: number }[] = [];
      const visit = (node: ExpandedNode, parentItemId: string | null, factor: number) => {
        if (node.attributes.phantom === true && node.children.length > 0) {
          for (const child of node.children) visit(child, parentItemId, factor * node.qty);
          return;
        }
        const id = newId();
        copies.push({ node, id, parentItemId, qty: node.qty * factor });
        // Lines nested in the same document stay nested; a sub-assembly's own BOM stays its own.
        for (const child of node.children) if (child.bomId === node.bomId) visit(child, id, 1);
      };
      for (const node of tree.top) visit(node, null, 1);
      const items: BomItemEntity[] = copies.map(({ node, id, parentItemId, qty }, index) => ({
        id,
        bomId: target.id,
        parentItemId,
        childPartId: node.childPartId,
        childVersionId: node.childVersionId,
        qty: Math.round(qty * 1e6) / 1e6,
        uom: node.uom,
        refdes: node.designators,
        notes: node.notes,
        sortIndex: index,
        attributes: node.attributes,
        dateFrom: node.dateFrom ?? null,
        dateTo: node.dateTo ?? null,
        serialFrom: node.serialFrom ?? null,
        serialTo: node.serialTo ?? null,
        lotFrom: node.lotFrom ?? null,
        lotTo: node.lotTo ?? null,
        createdAt: now,
        updatedAt: now,
      }));
      // Parents first, so the foreign key to a parent line is always satisfied.
      for (let i = 0; i < items.length; i += 500)
        await manager.insert(
          BomItemEntity,
          items.slice(i, i + 500) as QueryDeepPartialEntity<BomItemEntity>[],
        );
      const sourceAlternates = await repo.alternatesOf(copies.map((c) => c.node.itemId));
      const newIdOf = new Map<string, string>();
      for (const copy of copies) if (!newIdOf.has(copy.node.itemId)) newIdOf.set(copy.node.itemId, copy.id);
      const alternates = sourceAlternates.flatMap((a) => {
        const itemId = newIdOf.get(a.itemId);
        return itemId ? [{ ...a, itemId }] : [];
      });
      if (alternates.length > 0) await manager.insert(BomAlternateEntity, alternates);
      await this.boms.emit(manager, access, actor, target, 'derived', {
        sourceBomId: source.id,
        lines: items.length,
      });
      return this.boms.present(manager, access, target);
    });
  }

  /** Lines added, removed and changed from `leftRev` to `rightRev` of the BOM's assembly and type. */
  async diff(access: WorkspaceScope, bomId: string, query: BomDiffQuery): Promise<BomDiff> {
    const repo = this.boms.bomsIn(access);
    const bom = await repo.find(bomId);
    const side = async (rev: string) => {
      const found = await repo.findRevision(bom.assemblyPartId, bom.type, rev.trim());
      if (!found) throw new NotFoundError(`No ${bom.type} BOM revision ${rev} of this assembly`);
      return found;
    };
    const left = await side(query.leftRev);
    const right = await side(query.rightRev);
    const before = await this.diffLines(repo, left);
    const after = await this.diffLines(repo, right);
    const added: BomDiffLine[] = [];
    const removed: BomDiffLine[] = [];
    const changed: BomDiffChange[] = [];
    for (const [key, line] of after) {
      const old = before.get(key);
      if (!old) {
        added.push(publicLine(line));
        continue;
      }
      const changes = Object.keys(line.fields)
        .filter((field) => JSON.stringify(old.fields[field]) !== JSON.stringify(line.fields[field]))
        .map((field) => ({ field, from: old.fields[field], to: line.fields[field] }));
      if (changes.length > 0) changed.push({ ...publicLine(line), changes });
    }
    for (const [key, line] of before) if (!after.has(key)) removed.push(publicLine(line));
    return {
      left: { id: left.id, revision: left.revision },
      right: { id: right.id, revision: right.revision },
      added,
      removed,
      changed,
    };
  }

  /** A BOM's lines keyed by child part number, with the designators when the part repeats. */
  private async diffLines(repo: BomsRepository, bom: BomEntity): Promise<Map<string, DiffLine>> {
    const items = await repo.items(bom);
    const parts = await repo.partsById(items.map((i) => i.childPartId));
    const alternates = await repo.alternatesOf(items.map((i) => i.id));
    const alternateParts = await repo.partsById(alternates.map((a) => a.partId));
    const numberOf = (id: string) => parts.get(id)?.partNumber ?? alternateParts.get(id)?.partNumber ?? id;
    const repeats = new Map<string, number>();
    for (const item of items) repeats.set(item.childPartId, (repeats.get(item.childPartId) ?? 0) + 1);
    const lines = new Map<string, DiffLine>();
    for (const item of items) {
      const partNumber = numberOf(item.childPartId);
      let key = partNumber;
      if ((repeats.get(item.childPartId) ?? 0) > 1) {
        key = `${partNumber} ${item.refdes.join(',') || `#${item.sortIndex}`}`;
        for (let n = 2; lines.has(key); n++) key = `${partNumber} #${n}`;
      }
      const effectivity: Record<string, unknown> = {};
      for (const field of EFFECTIVITY_FIELDS) effectivity[field] = item[field] ?? null;
      lines.set(key, {
        key,
        partNumber,
        refdes: item.refdes,
        qty: item.qty,
        uom: item.uom,
        fields: {
          qty: item.qty,
          uom: item.uom,
          refdes: item.refdes,
          notes: item.notes,
          alternates: alternates
            .filter((a) => a.itemId === item.id)
            .map((a) => ({ partNumber: numberOf(a.partId), approval: a.approval, rationale: a.rationale })),
          effectivity,
        },
      });
    }
    return lines;
  }

  /**
   * Engineer+: the lines under the same parent (in this BOM) that share the child part or a
   * designator and would apply together with `effectivity`; valid when there are none.
   */
  async validateEffectivity(
    access: WorkspaceScope,
    bomId: string,
    request: ValidateEffectivityRequest,
  ): Promise<EffectivityReport> {
    const repo = this.boms.bomsIn(access);
    const bom = await repo.find(bomId);
    const problem = checkEffectivity(request.effectivity);
    if (problem) {
      throw new ValidationError(`effectivity.${problem.field} ${problem.message}`, [
        { field: `effectivity.${problem.field}`, message: problem.message },
      ]);
    }
    const items = await repo.items(bom);
    const line = request.itemId ? items.find((i) => i.id === request.itemId) : undefined;
    if (request.itemId && !line) throw new NotFoundError(`No line ${request.itemId} in this BOM`);
    const partId = request.partId ?? line?.childPartId;
    if (!partId) {
      throw new ValidationError('Name the line (itemId) or the part (partId) the effectivity is for', [
        { field: 'partId', message: 'required without itemId' },
      ]);
    }
    let refdes: string[];
    try {
      refdes = request.refdes !== undefined ? expandRefdes(request.refdes) : (line?.refdes ?? []);
    } catch (error) {
      if (error instanceof RefdesError)
        throw new ValidationError(`refdes: ${error.message}`, [{ field: 'refdes', message: error.message }]);
      throw error;
    }
    const parentItemId =
      request.parentItemId !== undefined ? request.parentItemId : (line?.parentItemId ?? null);
    const designators = new Set(refdes);
    const siblings = items.filter(
      (i) =>
        i.id !== line?.id &&
        i.parentItemId === parentItemId &&
        (i.childPartId === partId || i.refdes.some((d) => designators.has(d))),
    );
    const parts = await repo.partsById(siblings.map((s) => s.childPartId));
    const overlaps = findOverlaps(
      request.effectivity,
      siblings.map((s) => ({ ...s, partNumber: parts.get(s.childPartId)?.partNumber ?? s.childPartId })),
    );
    return { valid: overlaps.length === 0, overlaps };
  }

  /**
   * The assemblies whose BOMs list the part: directly, or (`all`) up to the top assemblies. Each
   * assembly counts with its current BOM of a type (the approved one, else the latest), so each
   * path appears once; one recursive query that stops where a part repeats on its path.
   */
  async whereUsed(access: WorkspaceScope, partId: string, levels: '1' | 'all'): Promise<WhereUsedList> {
    const manager = this.dataSource.manager;
    const part = await this.boms.bomsIn(access, manager).part(partId);
    // Shared sub-assemblies make paths multiply (2^n from a few lines): counted first, lazily, and
    // at most MAX_WHERE_USED_PATHS + 1 of them.
    const [{ paths }]: { paths: number }[] = await manager.query(
      `${WHERE_USED_PATHS} SELECT count(*)::int AS paths FROM (SELECT 1 FROM up LIMIT ${MAX_WHERE_USED_PATHS + 1}) x`,
      [access.id, part.id, levels === 'all'],
    );
    if (paths > MAX_WHERE_USED_PATHS) {
      throw new AppError(
        'payload_too_large',
        `This part is used on more than ${MAX_WHERE_USED_PATHS} paths; ask for its direct uses (levels=1)`,
      );
    }
    const rows: {
      bom_id: string;
      assembly_part_id: string;
      part_number: string;
      revision: string;
      type: 'engineering' | 'manufacturing';
      status: Bom['status'];
      level: number;
      qty: string;
      path: string[];
    }[] = await manager.query(
      `${WHERE_USED_PATHS}
       SELECT u.bom_id, u.assembly_part_id, p.part_number, u.revision, u.type, u.status, u.level, u.qty,
              ARRAY(SELECT pp.part_number FROM unnest(u.parts) WITH ORDINALITY AS x(id, n)
                    JOIN parts pp ON pp.id = x.id ORDER BY x.n) AS path
       FROM up u JOIN parts p ON p.id = u.assembly_part_id
       WHERE NOT u.cycle
       ORDER BY u.level, p.part_number, u.type, u.parts`,
      [access.id, part.id, levels === 'all'],
    );
    return {
      items: rows.map((r) => ({
        bomId: r.bom_id,
        assemblyPartId: r.assembly_part_id,
        assemblyPartNumber: r.part_number,
        revision: r.revision,
        type: r.type,
        status: r.status,
        level: r.level,
        qty: Math.round(Number(r.qty) * 1e6) / 1e6,
        path: r.path,
      })),
    };
  }
}

function publicLine(line: DiffLine): BomDiffLine {
  return { key: line.key, partNumber: line.partNumber, refdes: line.refdes, qty: line.qty, uom: line.uom };
}
