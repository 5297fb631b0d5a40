import { type BomType, DEFAULT_PAGE_SIZE, type ListBomsQuery } from '@hwp/contracts';
import { NotFoundError } from '@hwp/platform';
import { In } from 'typeorm';
import { PartEntity } from '../parts';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { BomAlternateEntity, BomEntity, BomItemEntity } from './bom.entity';

/**
 * The BOMs of one workspace. Headers are reached through the workspace's scope; lines and
 * alternates only through a BOM found there.
 */
export class BomsRepository {
  private readonly boms: WorkspaceScopedRepository<BomEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.boms = scope.repo(BomEntity);
  }

  get manager() {
    return this.scope.manager;
  }

  /** The BOM, in this workspace only (another workspace's BOM is 404); `lock` holds it until commit. */
  async find(bomId: string, lock = false): Promise<BomEntity> {
    const bom = await this.boms.findOne({ id: bomId }, lock ? { lock: true } : undefined);
    if (!bom) throw new NotFoundError('BOM not found');
    return bom;
  }

  insert(row: Omit<BomEntity, 'workspaceId'>): Promise<BomEntity> {
    return this.boms.insert(row);
  }

  save(bom: BomEntity): Promise<BomEntity> {
    return this.boms.save(bom);
  }

  /** The BOM of this assembly and type with this revision (case-insensitive), if any. */
  async findRevision(assemblyPartId: string, type: BomType, revision: string): Promise<BomEntity | null> {
    const rows: { id: string }[] = await this.manager.query(
      `SELECT id FROM boms WHERE workspace_id = $1 AND assembly_part_id = $2 AND type = $3
         AND lower(revision) = lower($4)`,
      [this.scope.id, assemblyPartId, type, revision],
    );
    return rows[0] ? this.find(rows[0].id) : null;
  }

  /** A page of the list of section 4.7, newest first. */
  list(query: ListBomsQuery): Promise<[BomEntity[], number]> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const qb = this.manager
      .createQueryBuilder(BomEntity, 'b')
      .where('b.workspace_id = :workspaceId', { workspaceId: this.scope.id });
    if (query.type) qb.andWhere('b.type = :type', { type: query.type });
    if (query.status) qb.andWhere('b.status = :status', { status: query.status });
    if (query.assemblyPartId)
      qb.andWhere('b.assembly_part_id = :assembly', { assembly: query.assemblyPartId });
    if (query.assemblyPn) {
      // The part's workspace named too: the part is then found by (workspace, number) in its index,
      // not by reading every workspace's parts.
      qb.innerJoin(PartEntity, 'p', 'p.id = b.assembly_part_id AND p.workspace_id = b.workspace_id').andWhere(
        'lower(p.part_number) = lower(:pn)',
        {
          pn: query.assemblyPn,
        },
      );
    }
    return qb
      .orderBy('b.created_at', 'DESC')
      .addOrderBy('b.id', 'DESC')
      .offset((page - 1) * pageSize)
      .limit(pageSize)
      .getManyAndCount();
  }

  /** Lines per BOM, for list answers. */
  async itemCounts(bomIds: string[]): Promise<Map<string, number>> {
    if (bomIds.length === 0) return new Map();
    const rows: { bom_id: string; count: number }[] = await this.manager.query(
      'SELECT bom_id, count(*)::int AS count FROM bom_items WHERE bom_id = ANY($1::uuid[]) GROUP BY bom_id',
      [bomIds],
    );
    return new Map(rows.map((r) => [r.bom_id, r.count]));
  }

  /** The BOM's lines, in sort order. */
  items(bom: BomEntity): Promise<BomItemEntity[]> {
    return this.manager.find(BomItemEntity, {
      where: { bomId: bom.id },
      order: { sortIndex: 'ASC', id: 'ASC' },
    });
  }

  async item(bom: BomEntity, itemId: string): Promise<BomItemEntity> {
    const row = await this.manager.findOne(BomItemEntity, { where: { id: itemId, bomId: bom.id } });
    if (!row) throw new NotFoundError(`No line ${itemId} in this BOM`);
    return row;
  }

  alternatesOf(itemIds: string[]): Promise<BomAlternateEntity[]> {
    if (itemIds.length === 0) return Promise.resolve([]);
    return this.manager.find(BomAlternateEntity, {
      where: { itemId: In(itemIds) },
      order: { itemId: 'ASC', position: 'ASC' },
    });
  }

  /** The part, in this workspace only (another workspace's part is 404). */
  async part(partId: string): Promise<PartEntity> {
    const part = await this.scope.repo(PartEntity).findOne({ id: partId });
    if (!part) throw new NotFoundError('Part not found');
    return part;
  }

  /** The assembly part, locked until commit: creates of one assembly's BOMs queue on it. */
  async lockAssembly(partId: string): Promise<void> {
    await this.manager.query('SELECT 1 FROM parts WHERE id = $1 FOR UPDATE', [partId]);
  }

  /** Who hears of a submitted BOM: the workspace's managers and owners with an email, but `actorId`. */
  approverEmails(actorId: string): Promise<{ email: string }[]> {
    return this.manager.query(
      `SELECT u.email FROM workspace_members m JOIN collab_users u ON u.id = m.user_id
        WHERE m.workspace_id = $1 AND m.role IN ('manager', 'owner') AND u.email <> '' AND u.id <> $2`,
      [this.scope.id, actorId],
    );
  }

  /** Who hears of an approved or rejected BOM: whoever submitted it, with an email, unless `actorId`. */
  submitterEmails(bomId: string, actorId: string): Promise<{ email: string }[]> {
    return this.manager.query(
      `SELECT u.email FROM boms b JOIN collab_users u ON u.id = b.submitted_by
        WHERE b.id = $1 AND u.email <> '' AND u.id <> $2`,
      [bomId, actorId],
    );
  }

  /** Parts of this workspace by id (missing ones are absent from the map). */
  async partsById(ids: string[]): Promise<Map<string, PartEntity>> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return new Map();
    const parts = await this.scope.repo(PartEntity).find({ where: { id: In(wanted) } });
    return new Map(parts.map((p) => [p.id, p]));
  }

  /** Parts of this workspace by part number, case-insensitively (keys lower-cased). */
  async partsByNumber(numbers: string[]): Promise<Map<string, PartEntity>> {
    const wanted = [...new Set(numbers.map((n) => n.toLowerCase()))];
    if (wanted.length === 0) return new Map();
    const parts = await this.manager
      .createQueryBuilder(PartEntity, 'p')
      .where('p.workspace_id = :ws', { ws: this.scope.id })
      .andWhere('lower(p.part_number) = ANY(:numbers)', { numbers: wanted })
      .getMany();
    return new Map(parts.map((p) => [p.partNumber.toLowerCase(), p]));
  }
}
