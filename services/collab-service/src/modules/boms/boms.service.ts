import type {
  Bom,
  BomDetail,
  BomList,
  BomNode,
  CostRollup,
  CreateBomRequest,
  ListBomsQuery,
} from '@hwp/contracts';
import { DEFAULT_PAGE_SIZE } from '@hwp/contracts';
import { AppError, type Bus, ConflictError, NotFoundError, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { usernames } from '../identity/usernames';
import {
  approvalActors,
  type BomSettingsService,
  checkMove,
  MOVES,
  type Move,
  notSubmitted,
  PAST,
  PartVersionEntity,
} from '../parts';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { BomEntity } from './bom.entity';
import { notifyApproval } from './bom-approval-mail';
import { type BomEvents, TREE_EVENTS } from './bom-events';
import { presentBom } from './bom-presenter';
import { rollupOf } from './bom-rollup';
import { assembleTree, type ExpandedTree, loadTreeLines, type TreeRoot } from './bom-tree';
import { type LineFacts, type LineNodeFields, lineNodeFields, nodeOf, TreeWalk } from './bom-walk';
import { BomsRepository } from './boms.repository';

/**
 * BOM headers, their approval flow (DECISIONS.md section 5), the expanded tree and the cost rollup.
 * Every change is one transaction that ends with its `bom` event.
 */
/**
 * Occurrences one tree read, rollup, derivation or export expands (a shared sub-assembly counts each
 * time it occurs). A few kilobytes of lines can nest shared sub-assemblies into 2^n occurrences.
 */
export const MAX_TREE_OCCURRENCES = 100_000;

/** The walk, unless its tree expands past MAX_TREE_OCCURRENCES (413, counted without expanding). */
function withinBudget(walk: TreeWalk): TreeWalk {
  if (walk.countOccurrences(MAX_TREE_OCCURRENCES) > MAX_TREE_OCCURRENCES) {
    throw new AppError(
      'payload_too_large',
      `The tree under this BOM expands to more than ${MAX_TREE_OCCURRENCES} lines (a shared sub-assembly counts each time it occurs): read the BOMs of its sub-assemblies`,
    );
  }
  return walk;
}

export class BomsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: BomEvents,
    private readonly bus: Bus,
    private readonly settings: BomSettingsService,
  ) {}

  bomsIn(workspace: WorkspaceScope, manager: EntityManager = this.dataSource.manager) {
    return new BomsRepository(workspace.in(manager));
  }

  /** Engineer+: a new draft BOM of an assembly part of this workspace; revisions are unique per assembly and type. */
  async create(actor: CollabUserEntity, access: WorkspaceScope, request: CreateBomRequest): Promise<Bom> {
    return this.dataSource.transaction(async (manager) => {
      const boms = this.bomsIn(access, manager);
      const assembly = (await boms.partsById([request.assemblyPartId])).get(request.assemblyPartId);
      if (!assembly) throw new NotFoundError('Assembly part not found');
      // Creates of one assembly queue here, so two requests cannot both take a revision.
      await boms.lockAssembly(assembly.id);
      if (request.assemblyVersionId) {
        const version = await manager.findOne(PartVersionEntity, {
          where: { id: request.assemblyVersionId, partId: assembly.id },
        });
        if (!version) {
          throw new ValidationError('assemblyVersionId is not a version of the assembly part', [
            { field: 'assemblyVersionId', message: 'not a version of the assembly part' },
          ]);
        }
      }
      const revision = request.revision.trim();
      if (await boms.findRevision(assembly.id, request.type, revision)) {
        throw new ConflictError(
          `${assembly.partNumber} already has a ${request.type} BOM revision ${revision}`,
          { field: 'revision' },
        );
      }
      const now = new Date();
      const row = await boms.insert({
        id: newId(),
        assemblyPartId: assembly.id,
        assemblyVersionId: request.assemblyVersionId ?? null,
        type: request.type,
        revision,
        status: 'draft',
        changeNote: request.changeNote ?? null,
        sourceBomId: null,
        createdBy: actor.id,
        createdAt: now,
        updatedAt: now,
        ...notSubmitted(),
      });
      await this.emit(manager, access, actor, row, 'created');
      return this.present(manager, access, row);
    });
  }

  async list(access: WorkspaceScope, query: ListBomsQuery): Promise<BomList> {
    const boms = this.bomsIn(access);
    const [rows, total] = await boms.list(query);
    const counts = await boms.itemCounts(rows.map((r) => r.id));
    const numbers = await boms.partsById(rows.map((r) => r.assemblyPartId));
    const names = await usernames(this.dataSource.manager, rows.flatMap(approvalActors));
    return {
      items: rows.map((row) =>
        presentBom(
          row,
          access.name,
          numbers.get(row.assemblyPartId)?.partNumber ?? '',
          counts.get(row.id) ?? 0,
          names,
        ),
      ),
      total,
      page: query.page ?? 1,
      pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE,
    };
  }

  /** The header and a walk of the tree under it (the tree read streams it: streamBomDetail). */
  async detailWalk(
    access: WorkspaceScope,
    bomId: string,
    manager = this.dataSource.manager,
  ): Promise<{ header: Bom; walk: TreeWalk }> {
    const bom = await this.bomsIn(access, manager).find(bomId);
    const header = await this.present(manager, access, bom);
    return { header, walk: await this.walk(manager, bom, header.assemblyPartNumber) };
  }

  /** The header with the expanded tree, as one object (the answer of a change of lines). */
  async detail(access: WorkspaceScope, bomId: string, manager = this.dataSource.manager): Promise<BomDetail> {
    const { header, walk } = await this.detailWalk(access, bomId, manager);
    const fields = new Map<LineFacts, LineNodeFields>();
    const tree: BomNode[] = [];
    for (const occurrence of walk.occurrences()) {
      let line = fields.get(occurrence.facts);
      if (!line) {
        line = lineNodeFields(occurrence.facts);
        fields.set(occurrence.facts, line);
      }
      tree.push(nodeOf(occurrence, line));
    }
    return { ...header, tree };
  }

  /** The multi-level cost rollup: totals per currency, the leaves without a cost, the direct lines. */
  async costRollup(access: WorkspaceScope, bomId: string): Promise<CostRollup> {
    const manager = this.dataSource.manager;
    const bom = await this.bomsIn(access, manager).find(bomId);
    const assembly = (await this.bomsIn(access, manager).partsById([bom.assemblyPartId])).get(
      bom.assemblyPartId,
    );
    const tree = await this.expand(manager, bom, assembly?.partNumber ?? '');
    const rates = (await this.settings.get(access)).currencyRates;
    return rollupOf(bom.id, assembly?.partNumber ?? '', tree, rates);
  }

  /**
   * The latest change that can reach a BOM's tree in its workspace: a validator (id) and its time,
   * read without expanding the tree (an export's ETag and Last-Modified).
   */
  treeChange(manager: EntityManager, workspace: WorkspaceScope): Promise<{ id: number; at: Date | null }> {
    return this.events.lastChange(manager, workspace.id, TREE_EVENTS);
  }

  /** The tree under a BOM (its distinct lines in one query), expanded with quantities, costs and warnings. */
  async expand(manager: EntityManager, bom: BomEntity, assemblyPartNumber: string): Promise<ExpandedTree> {
    const root = rootOf(bom, assemblyPartNumber);
    const lines = await loadTreeLines(manager, root);
    withinBudget(new TreeWalk(lines, root));
    return assembleTree(lines, root);
  }

  /** The tree under a BOM as a walk (exports): its distinct lines read in one query, nothing expanded yet. */
  async walk(manager: EntityManager, bom: BomEntity, assemblyPartNumber: string): Promise<TreeWalk> {
    const root = rootOf(bom, assemblyPartNumber);
    return withinBudget(new TreeWalk(await loadTreeLines(manager, root), root));
  }

  submit(actor: CollabUserEntity, access: WorkspaceScope, bomId: string): Promise<Bom> {
    return this.move(actor, access, bomId, 'submit', (row, now) => {
      row.submittedBy = actor.id;
      row.submittedAt = now;
      return {};
    });
  }

  approve(actor: CollabUserEntity, access: WorkspaceScope, bomId: string): Promise<Bom> {
    return this.move(actor, access, bomId, 'approve', (row, now) => {
      row.approvedBy = actor.id;
      row.approvedAt = now;
      return {};
    });
  }

  reject(actor: CollabUserEntity, access: WorkspaceScope, bomId: string, reason?: string): Promise<Bom> {
    return this.move(actor, access, bomId, 'reject', (row, now) => {
      row.rejectedBy = actor.id;
      row.rejectedAt = now;
      row.rejectionReason = reason?.trim() || null;
      return row.rejectionReason ? { reason: row.rejectionReason } : {};
    });
  }

  /**
   * Locks a BOM whose lines are about to change: 409 unless it is a draft, or rejected (which
   * returns it to draft, as editing a rejected version does).
   */
  async lockEditable(boms: BomsRepository, bomId: string): Promise<BomEntity> {
    const bom = await boms.find(bomId, true);
    checkMove(bom.status, 'edit', `BOM revision ${bom.revision}`, 'revision');
    if (bom.status === 'rejected') {
      bom.status = 'draft';
      bom.rejectedAt = null;
      bom.rejectedBy = null;
    }
    bom.updatedAt = new Date();
    await boms.save(bom);
    return bom;
  }

  private async move(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    bomId: string,
    move: Move,
    apply: (row: BomEntity, now: Date) => Record<string, unknown>,
  ): Promise<Bom> {
    return this.dataSource.transaction(async (manager) => {
      const boms = this.bomsIn(access, manager);
      const row = await boms.find(bomId, true);
      checkMove(row.status, move, `BOM revision ${row.revision}`, 'revision');
      const now = new Date();
      const previous = row.status;
      const changes = apply(row, now);
      row.status = MOVES[move].to;
      row.updatedAt = now;
      await boms.save(row);
      const bom = await this.present(manager, access, row);
      await notifyApproval(this.bus, boms, access, actor, bom, move);
      await this.emit(manager, access, actor, row, PAST[move], {
        ...changes,
        from: previous,
        to: row.status,
      });
      return bom;
    });
  }

  async present(manager: EntityManager, access: WorkspaceScope, row: BomEntity): Promise<Bom> {
    const boms = this.bomsIn(access, manager);
    const assembly = (await boms.partsById([row.assemblyPartId])).get(row.assemblyPartId);
    const counts = await boms.itemCounts([row.id]);
    const names = await usernames(manager, approvalActors(row));
    return presentBom(row, access.name, assembly?.partNumber ?? '', counts.get(row.id) ?? 0, names);
  }

  /** The `bom` event (last in a transaction: emitting locks the workspace's event counter until commit). */
  async emit(
    manager: EntityManager,
    access: WorkspaceScope,
    actor: CollabUserEntity,
    row: BomEntity,
    action: string,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await this.events.emit(
      manager,
      access.ref,
      'bom',
      {
        action,
        bomId: row.id,
        assemblyPartId: row.assemblyPartId,
        type: row.type,
        revision: row.revision,
        status: row.status,
        ...extra,
      },
      { actor: { id: actor.id, username: actor.username } },
    );
  }
}

/** Where a walk of the BOM's tree starts. */
function rootOf(bom: BomEntity, assemblyPartNumber: string): TreeRoot {
  const { id, workspaceId, type, assemblyPartId } = bom;
  return { id, workspaceId, type, assemblyPartId, assemblyPartNumber };
}
