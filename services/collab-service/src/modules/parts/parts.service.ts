import {
  type CreatePartRequest,
  DEFAULT_PAGE_SIZE,
  type ListPartsQuery,
  PART_LIFECYCLE_MOVES,
  type Part,
  type PartDetail,
  type PartDomain,
  type PartList,
  type PartSortKey,
  type UpdatePartRequest,
  type WhereUsedList,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError, NotFoundError, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { atLeast, type WorkspaceAccess } from '../workspaces/workspace-access';
import type { BomSettingsService, PartRules } from './bom-settings.service';
import { PartEntity, PartHistoryEntity, PartVersionEntity } from './part.entity';
import { partNumberFor } from './part-numbering';
import { checkAttributes, isCurrencyCode, PART_EDITABLE_FIELDS } from './part-rules';
import { presentHistory, presentPart, presentVersion, usernames, versionActors } from './parts.presenter';

/**
 * Where part events go: the workspace's SSE stream (`modules/events`), in the caller's transaction.
 * `CollabEvents` fits; a no-op fits where no stream exists.
 */
export interface PartEvents {
  emit(
    manager: EntityManager,
    workspace: { id: string; name: string },
    type: 'part' | 'import.progress',
    data: object,
    meta: { actor: { id: string; username: string }; to?: { id: string; username: string } },
  ): Promise<unknown>;
}

const SORT_COLUMNS: Record<PartSortKey, string> = {
  part_number: 'p.part_number',
  name: 'p.name',
  domain: 'p.domain',
  lifecycle: 'p.lifecycle',
  manufacturer_part_number: 'p.manufacturer_part_number',
  updated_at: 'p.updated_at',
};

const EDITABLE = PART_EDITABLE_FIELDS;
type Editable = (typeof EDITABLE)[number];

const likeEscape = (text: string) => text.replace(/[\\%_]/g, '\\$&');
const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const cleanTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim()).filter((t) => t.length > 0))];

/** Parts of a workspace (section 4.6): create, search, detail, update with lifecycle. */
export class PartsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: BomSettingsService,
    private readonly events: PartEvents,
  ) {}

  /** Engineer+ (the route checks it); a lifecycle other than prototype needs manager+. */
  async create(actor: CollabUserEntity, access: WorkspaceAccess, request: CreatePartRequest): Promise<Part> {
    const lifecycle = request.lifecycle ?? 'prototype';
    if (lifecycle !== 'prototype' && !atLeast(access.role, 'manager')) {
      throw new ForbiddenError('Creating a part in another lifecycle than prototype needs the manager role');
    }
    this.checkCurrency(request.currency);
    const domain: PartDomain = request.domain ?? 'other';
    const attributes = request.attributes ?? {};
    return this.dataSource.transaction(async (manager) => {
      const rules = await this.settings.rules(manager, access.id);
      this.checkTemplate(rules, domain, attributes);
      const partNumber = await partNumberFor(manager, access, rules, domain, request.partNumber?.trim());
      const now = new Date();
      const row: PartEntity = {
        id: newId(),
        workspaceId: access.id,
        partNumber,
        name: request.name.trim(),
        description: request.description ?? '',
        domain,
        uom: request.uom?.trim() ?? 'each',
        lifecycle,
        tags: cleanTags(request.tags ?? []),
        attributes,
        manufacturerName: request.manufacturerName?.trim() || null,
        manufacturerPartNumber: request.manufacturerPartNumber?.trim() || null,
        unitCost: request.unitCost ?? null,
        currency: request.currency ?? null,
        rohsCompliant: request.rohsCompliant ?? null,
        reachCompliant: request.reachCompliant ?? null,
        conflictMinerals: request.conflictMinerals ?? null,
        createdBy: actor.id,
        createdAt: now,
        updatedAt: now,
      };
      await manager.save(PartEntity, row);
      await this.record(manager, row.id, actor, 'created', { partNumber, name: row.name, domain, lifecycle });
      return presentPart(row, access.name, new Map([[actor.id, actor.username]]));
    });
  }

  async list(access: WorkspaceAccess, query: ListPartsQuery): Promise<PartList> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const dir = query.dir === 'desc' ? 'DESC' : 'ASC';
    const qb = this.dataSource.manager
      .createQueryBuilder(PartEntity, 'p')
      .where('p.workspace_id = :workspaceId', { workspaceId: access.id });
    const q = query.q?.trim().toLowerCase();
    if (q) {
      qb.andWhere(
        '(lower(p.part_number) LIKE :prefix OR lower(p.name) LIKE :contains OR lower(p.manufacturer_part_number) LIKE :prefix)',
        { prefix: `${likeEscape(q)}%`, contains: `%${likeEscape(q)}%` },
      );
    }
    if (query.domain) qb.andWhere('p.domain = :domain', { domain: query.domain });
    if (query.lifecycle) qb.andWhere('p.lifecycle = :lifecycle', { lifecycle: query.lifecycle });
    if (query.tag) qb.andWhere('p.tags @> ARRAY[:tag]::text[]', { tag: query.tag });
    // id breaks ties, so pages neither repeat nor skip parts that share a sort value.
    const [rows, total] = await qb
      .orderBy(SORT_COLUMNS[query.sort ?? 'part_number'], dir)
      .addOrderBy('p.id', dir)
      .offset((page - 1) * pageSize)
      .limit(pageSize)
      .getManyAndCount();
    const names = await usernames(
      this.dataSource.manager,
      rows.map((r) => r.createdBy),
    );
    return { items: rows.map((r) => presentPart(r, access.name, names)), total, page, pageSize };
  }

  /** The part with its versions (newest first) and its audit history (oldest first). */
  async detail(access: WorkspaceAccess, partId: string): Promise<PartDetail> {
    const manager = this.dataSource.manager;
    const part = await this.find(manager, access, partId);
    const versions = await manager.find(PartVersionEntity, {
      where: { partId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
    const history = await manager.find(PartHistoryEntity, {
      where: { partId },
      order: { at: 'ASC', id: 'ASC' },
    });
    const names = await usernames(manager, [
      part.createdBy,
      ...versions.flatMap(versionActors),
      ...history.map((h) => h.actor),
    ]);
    return {
      ...presentPart(part, access.name, names),
      versions: versions.map((v) => presentVersion(v, names)),
      history: history.map((h) => presentHistory(h, names)),
    };
  }

  /** Engineer+; a lifecycle change needs manager+ (403) and a move of DECISIONS.md section 5 (409). */
  async update(
    actor: CollabUserEntity,
    access: WorkspaceAccess,
    partId: string,
    request: UpdatePartRequest,
  ): Promise<Part> {
    this.checkCurrency(request.currency);
    return this.dataSource.transaction(async (manager) => {
      const part = await this.find(manager, access, partId, true);
      const next = request.lifecycle;
      const lifecycleChange = next !== undefined && next !== part.lifecycle;
      if (lifecycleChange) {
        if (!atLeast(access.role, 'manager'))
          throw new ForbiddenError('Changing the lifecycle needs the manager role');
        if (!PART_LIFECYCLE_MOVES[part.lifecycle].includes(next)) {
          throw new ConflictError(`A part cannot move from ${part.lifecycle} to ${next}`, {
            lifecycle: part.lifecycle,
            allowed: PART_LIFECYCLE_MOVES[part.lifecycle],
          });
        }
      }
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      const patch: Partial<Record<Editable, unknown>> = {};
      for (const field of EDITABLE) {
        let value: unknown = request[field];
        if (value === undefined) continue;
        if (field === 'tags') value = cleanTags(value as string[]);
        if (sameValue(part[field], value)) continue;
        changes[field] = { from: part[field], to: value };
        patch[field] = value;
      }
      if (patch.domain !== undefined || patch.attributes !== undefined) {
        const rules = await this.settings.rules(manager, access.id);
        this.checkTemplate(rules, (patch.domain ?? part.domain) as PartDomain, {
          ...((patch.attributes ?? part.attributes) as Record<string, unknown>),
        });
      }
      if (Object.keys(patch).length === 0 && !lifecycleChange) {
        return presentPart(part, access.name, await usernames(manager, [part.createdBy]));
      }
      const previous = part.lifecycle;
      Object.assign(part, patch, lifecycleChange ? { lifecycle: next } : {}, { updatedAt: new Date() });
      await manager.save(PartEntity, part);
      if (Object.keys(changes).length > 0) await this.record(manager, part.id, actor, 'updated', changes);
      if (lifecycleChange) {
        await this.record(manager, part.id, actor, 'lifecycle', { lifecycle: { from: previous, to: next } });
        // Last: emitting locks the workspace's event counter until commit.
        await this.events.emit(
          manager,
          access,
          'part',
          { action: 'lifecycle', partId: part.id, partNumber: part.partNumber, lifecycle: next, previous },
          { actor: { id: actor.id, username: actor.username } },
        );
      }
      return presentPart(part, access.name, await usernames(manager, [part.createdBy]));
    });
  }

  /** Assemblies whose BOMs reference the part. */
  async whereUsed(access: WorkspaceAccess, partId: string): Promise<WhereUsedList> {
    await this.find(this.dataSource.manager, access, partId);
    // BOMs (section 4.7) are not stored by this service yet, so no assembly references any part and
    // the answer is the empty list the parts issue asks for. The BOM issue replaces this with a query
    // over its item table.
    return { items: [] };
  }

  /** The part, in this workspace only (another workspace's part is 404). */
  async find(
    manager: EntityManager,
    access: WorkspaceAccess,
    partId: string,
    lock = false,
  ): Promise<PartEntity> {
    const part = await manager.findOne(PartEntity, {
      where: { id: partId, workspaceId: access.id },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!part) throw new NotFoundError('Part not found');
    return part;
  }

  /** Appends to the part's audit history in the caller's transaction. */
  async record(
    manager: EntityManager,
    partId: string,
    actor: CollabUserEntity,
    action: string,
    changes: Record<string, unknown>,
  ): Promise<void> {
    await manager.query(
      'INSERT INTO part_history (id, part_id, actor, at, action, changes) VALUES ($1, $2, $3, now(), $4, $5)',
      [newId(), partId, actor.id, action, JSON.stringify(changes)],
    );
  }

  private checkCurrency(currency: string | undefined): void {
    if (currency !== undefined && !isCurrencyCode(currency)) {
      throw new ValidationError(`${currency} is not an ISO 4217 currency code`, [
        { field: 'currency', message: 'not an ISO 4217 currency code' },
      ]);
    }
  }

  private checkTemplate(rules: PartRules, domain: PartDomain, attributes: Record<string, unknown>): void {
    const { errors } = checkAttributes(rules.domainTemplates[domain], attributes);
    if (errors.length > 0) {
      const names = errors.map((e) => e.field.replace(/^attributes\./, '')).join(', ');
      throw new ValidationError(`Attributes of a ${domain} part are missing or invalid: ${names}`, errors);
    }
  }

  /** For the version service: the part's versions, newest first. */
  versionsOf(manager: EntityManager, partId: string) {
    return manager.find(PartVersionEntity, { where: { partId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }
}
