import {
  type AlternateInput,
  type BomDetail,
  type BomItemInput,
  MAX_REFDES_PER_BOM,
  type SetAlternatesRequest,
  type UpsertBomItemsRequest,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError, NotFoundError, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { type PartEntity, PartVersionEntity } from '../parts';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { BomAlternateEntity, type BomEntity, BomItemEntity } from './bom.entity';
import type { BomsRepository } from './boms.repository';
import type { BomsService } from './boms.service';
import { checkEffectivity } from './effectivity';
import { countRefdes, expandRefdes, RefdesError } from './refdes';

const fieldError = (field: string, message: string, detail?: string) =>
  new ValidationError(detail ?? `${field} ${message}`, [{ field, message }]);

/**
 * The lines of a draft BOM: bulk upsert and delete in one transaction, alternates, and the cycle
 * check that refuses a change making an assembly contain itself.
 */
export class BomLinesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly boms: BomsService,
    /** Designators of one change in all (BOM_MAX_REFDES). */
    private readonly maxRefdes = MAX_REFDES_PER_BOM,
  ) {}

  /** Engineer+: applies every line of the request or none (400/404/409 name the line). */
  async upsert(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    bomId: string,
    request: UpsertBomItemsRequest,
  ): Promise<BomDetail> {
    chargeDesignators(request.items, this.maxRefdes);
    return this.dataSource.transaction(async (manager) => {
      const repo = this.boms.bomsIn(access, manager);
      const bom = await this.boms.lockEditable(repo, bomId);
      const existing = new Map((await repo.items(bom)).map((row) => [row.id, row]));
      const parts = await this.resolveParts(repo, request.items);
      let upserted = 0;
      let deleted = 0;
      for (const [index, input] of request.items.entries()) {
        const at = `items[${index}]`;
        if (input._op === 'delete') {
          if (!input.id) throw fieldError(`${at}.id`, 'required to delete a line');
          const row = existing.get(input.id);
          if (!row) throw new NotFoundError(`${at}: no line ${input.id} in this BOM`);
          // Lines nested under it go with it (the foreign key cascades).
          await manager.delete(BomItemEntity, { id: row.id });
          for (const [id, other] of existing)
            if (id === row.id || isUnder(existing, other, row.id)) existing.delete(id);
          deleted++;
          continue;
        }
        const row = await this.applyLine(manager, bom, existing, parts, input, at);
        await manager.save(BomItemEntity, row);
        existing.set(row.id, row);
        if (input.alternates)
          await this.replaceAlternates(manager, access, actor, row, input.alternates, parts, at);
        upserted++;
      }
      await this.checkNoCycle(manager, bom);
      await this.boms.emit(manager, access, actor, bom, 'items.updated', { upserted, deleted });
      return this.boms.detail(access, bom.id, manager);
    });
  }

  /** Engineer+ proposes; only manager+ may set `approved`. Replaces the line's alternates. */
  async setAlternates(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    bomId: string,
    itemId: string,
    request: SetAlternatesRequest,
  ): Promise<BomDetail> {
    return this.dataSource.transaction(async (manager) => {
      const repo = this.boms.bomsIn(access, manager);
      const bom = await this.boms.lockEditable(repo, bomId);
      const row = await repo.item(bom, itemId);
      const parts = await repo.partsById(request.alternates.map((a) => a.partId));
      await this.replaceAlternates(manager, access, actor, row, request.alternates, parts, 'alternates');
      await this.boms.emit(manager, access, actor, bom, 'alternates.updated', {
        itemId,
        alternates: request.alternates.map((a) => ({ partId: a.partId, approval: a.approval })),
      });
      return this.boms.detail(access, bom.id, manager);
    });
  }

  private async resolveParts(repo: BomsRepository, items: BomItemInput[]): Promise<Map<string, PartEntity>> {
    const ids = items.flatMap((i) => [i.childPartId, ...(i.alternates ?? []).map((a) => a.partId)]);
    const byId = await repo.partsById(ids.filter((id): id is string => !!id));
    const byNumber = await repo.partsByNumber(
      items.map((i) => i.childPartNumber).filter((n): n is string => !!n),
    );
    const parts = new Map(byId);
    for (const [number, part] of byNumber) parts.set(`pn:${number}`, part);
    return parts;
  }

  private async applyLine(
    manager: EntityManager,
    bom: BomEntity,
    existing: Map<string, BomItemEntity>,
    parts: Map<string, PartEntity>,
    input: BomItemInput,
    at: string,
  ): Promise<BomItemEntity> {
    const now = new Date();
    let row = input.id ? existing.get(input.id) : undefined;
    if (!row) {
      if (input.id) {
        const elsewhere = await manager.findOne(BomItemEntity, {
          where: { id: input.id },
          select: { id: true },
        });
        if (elsewhere)
          throw new ConflictError(`${at}: line ${input.id} belongs to another BOM`, { itemId: input.id });
      }
      if (!input.childPartId && !input.childPartNumber)
        throw fieldError(`${at}.childPartId`, 'required for a new line (or childPartNumber)');
      if (input.qty === undefined) throw fieldError(`${at}.qty`, 'required for a new line');
      row = {
        id: input.id ?? newId(),
        bomId: bom.id,
        parentItemId: null,
        childPartId: '',
        childVersionId: null,
        qty: input.qty,
        uom: 'each',
        refdes: [],
        notes: '',
        sortIndex: existing.size,
        attributes: {},
        dateFrom: null,
        dateTo: null,
        serialFrom: null,
        serialTo: null,
        lotFrom: null,
        lotTo: null,
        createdAt: now,
        updatedAt: now,
      };
    } else {
      row = { ...row };
    }
    if (input.childPartId || input.childPartNumber) {
      const part = input.childPartId
        ? parts.get(input.childPartId)
        : parts.get(`pn:${input.childPartNumber?.toLowerCase()}`);
      if (!part) {
        throw new NotFoundError(
          `${at}: part ${input.childPartId ?? input.childPartNumber} not found in this workspace`,
        );
      }
      if (part.id === bom.assemblyPartId)
        throw new ConflictError(`${at}: ${part.partNumber} cannot contain itself`, {
          cycle: [part.partNumber, part.partNumber],
        });
      row.childPartId = part.id;
    }
    if (input.childVersionId !== undefined) {
      if (input.childVersionId !== null) {
        const version = await manager.findOne(PartVersionEntity, {
          where: { id: input.childVersionId, partId: row.childPartId },
        });
        if (!version) throw fieldError(`${at}.childVersionId`, 'is not a version of the child part');
      }
      row.childVersionId = input.childVersionId;
    }
    if (input.parentItemId !== undefined) {
      if (input.parentItemId !== null) {
        const parent = existing.get(input.parentItemId);
        if (!parent) throw fieldError(`${at}.parentItemId`, 'is not a line of this BOM (list parents first)');
        if (parent.id === row.id || isUnder(existing, parent, row.id))
          throw fieldError(`${at}.parentItemId`, 'would nest the line under itself');
      }
      row.parentItemId = input.parentItemId;
    }
    if (input.qty !== undefined) row.qty = input.qty;
    if (input.uom !== undefined) row.uom = input.uom.trim().toLowerCase();
    if (input.notes !== undefined) row.notes = input.notes;
    if (input.sortIndex !== undefined) row.sortIndex = input.sortIndex;
    if (input.attributes !== undefined) row.attributes = input.attributes;
    if (input.refdes !== undefined) {
      try {
        row.refdes = expandRefdes(input.refdes);
      } catch (error) {
        if (error instanceof RefdesError)
          throw fieldError(`${at}.refdes`, error.message, `${at}.refdes: ${error.message}`);
        throw error;
      }
    }
    for (const field of ['dateFrom', 'dateTo', 'serialFrom', 'serialTo', 'lotFrom', 'lotTo'] as const) {
      if (input[field] !== undefined) (row as unknown as Record<string, unknown>)[field] = input[field];
    }
    const problem = checkEffectivity(row);
    if (problem) throw fieldError(`${at}.${problem.field}`, problem.message);
    row.updatedAt = now;
    return row;
  }

  private async replaceAlternates(
    manager: EntityManager,
    access: WorkspaceScope,
    actor: CollabUserEntity,
    row: BomItemEntity,
    alternates: AlternateInput[],
    parts: Map<string, PartEntity>,
    at: string,
  ): Promise<void> {
    const seen = new Set<string>();
    const previous = new Map(
      (await manager.find(BomAlternateEntity, { where: { itemId: row.id } })).map((a) => [a.partId, a]),
    );
    const rows: BomAlternateEntity[] = [];
    for (const [index, alternate] of alternates.entries()) {
      const part = parts.get(alternate.partId);
      if (!part)
        throw new NotFoundError(`${at}[${index}]: part ${alternate.partId} not found in this workspace`);
      if (part.id === row.childPartId) throw fieldError(`${at}[${index}].partId`, 'is the line’s own part');
      if (seen.has(part.id)) throw fieldError(`${at}[${index}].partId`, 'is listed twice');
      seen.add(part.id);
      const before = previous.get(part.id);
      const keepsApproval = before?.approval === 'approved' && alternate.approval === 'approved';
      if (alternate.approval === 'approved' && !keepsApproval && !atLeast(access.role, 'manager')) {
        throw new ForbiddenError(
          'Only a manager or owner may approve an alternate; propose it as conditional',
        );
      }
      rows.push({
        itemId: row.id,
        partId: part.id,
        position: index,
        approval: alternate.approval,
        rationale: alternate.rationale?.trim() ?? before?.rationale ?? '',
        proposedBy: before?.proposedBy ?? actor.id,
        approvedBy:
          alternate.approval === 'approved'
            ? keepsApproval
              ? (before?.approvedBy ?? actor.id)
              : actor.id
            : null,
      });
    }
    await manager.delete(BomAlternateEntity, { itemId: row.id });
    if (rows.length > 0) await manager.insert(BomAlternateEntity, rows);
  }

  /** 409 naming the cycle when, after the change, the BOM's tree reaches its own assembly again. */
  async checkNoCycle(manager: EntityManager, bom: BomEntity): Promise<void> {
    const assembly = await manager.query('SELECT part_number FROM parts WHERE id = $1', [bom.assemblyPartId]);
    const tree = await this.boms.expand(manager, bom, assembly[0]?.part_number ?? '');
    const cycle = tree.cycles[0];
    if (cycle) {
      throw new ConflictError(`This change would make an assembly contain itself: ${cycle.join(' -> ')}`, {
        cycle,
      });
    }
  }
}

/** Whether `row` sits (at any depth) under the line `ancestorId` inside the document. */
function isUnder(rows: Map<string, BomItemEntity>, row: BomItemEntity, ancestorId: string): boolean {
  const seen = new Set<string>();
  for (
    let parent = row.parentItemId;
    parent && !seen.has(parent);
    parent = rows.get(parent)?.parentItemId ?? null
  ) {
    if (parent === ancestorId) return true;
    seen.add(parent);
  }
  return false;
}

/**
 * The designators of one change, counted before any is expanded: each line at most MAX_REFDES, all
 * of them at most `budget` (BOM_MAX_REFDES; a 1 MB body of ranges would otherwise expand to 10^8 strings).
 */
function chargeDesignators(items: { refdes?: string | string[] }[], budget: number): void {
  let total = 0;
  for (const [index, item] of items.entries()) {
    try {
      total += countRefdes(item.refdes);
    } catch (error) {
      if (!(error instanceof RefdesError)) throw error;
      throw fieldError(`items[${index}].refdes`, error.message, `items[${index}].refdes: ${error.message}`);
    }
    if (total > budget) {
      throw fieldError(
        `items[${index}].refdes`,
        `the change holds more than ${budget} reference designators`,
        `More than ${budget} reference designators in one change (by items[${index}]): split it`,
      );
    }
  }
}
