import {
  type CreatePartRequest,
  DEFAULT_PAGE_SIZE,
  type ListPartsQuery,
  PART_LIFECYCLE_MOVES,
  type Part,
  type PartDetail,
  type PartDomain,
  type PartList,
  type UpdatePartRequest,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { usernames } from '../identity/usernames';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { BomSettingsService, PartRules } from './bom-settings.service';
import { NEW_PART } from './import/part-import-plan';
import type { PartEntity } from './part.entity';
import { partNumberFor } from './part-numbering';
import { checkAttributes, isCurrencyCode, PART_EDITABLE_FIELDS } from './part-rules';
import { presentHistory, presentPart, presentVersion, versionActors } from './parts.presenter';
import { PartsRepository } from './parts.repository';

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

/** A part another feature creates (a BOM import's missing child): its number, name and unit. */
export interface CatalogPart {
  partNumber: string;
  name: string;
  uom: string;
}

const EDITABLE = PART_EDITABLE_FIELDS;
type Editable = (typeof EDITABLE)[number];

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const cleanTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim()).filter((t) => t.length > 0))];

/** Parts of a workspace (section 4.6): create, search, detail, update with lifecycle. */
export class PartsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: BomSettingsService,
    private readonly events: PartEvents,
  ) {}

  /** The workspace's parts on a transaction's manager (or the data source's). */
  private partsIn(workspace: WorkspaceScope, manager: EntityManager = this.dataSource.manager) {
    return new PartsRepository(workspace.in(manager));
  }

  /** Engineer+ (the route checks it); a lifecycle other than prototype needs manager+. */
  async create(
    actor: CollabUserEntity,
    workspace: WorkspaceScope,
    request: CreatePartRequest,
  ): Promise<Part> {
    const lifecycle = request.lifecycle ?? 'prototype';
    if (lifecycle !== 'prototype' && !atLeast(workspace.role, 'manager')) {
      throw new ForbiddenError('Creating a part in another lifecycle than prototype needs the manager role');
    }
    this.checkCurrency(request.currency);
    const domain: PartDomain = request.domain ?? 'other';
    const attributes = request.attributes ?? {};
    return this.dataSource.transaction(async (manager) => {
      const parts = this.partsIn(workspace, manager);
      const rules = await this.settings.rules(workspace.in(manager));
      this.checkTemplate(rules, domain, attributes);
      const partNumber = await partNumberFor(parts, workspace, rules, domain, request.partNumber?.trim());
      const now = new Date();
      const row = await parts.insert({
        id: newId(),
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
      });
      await parts.appendHistory(row, actor.id, 'created', { partNumber, name: row.name, domain, lifecycle });
      // Last: emitting locks the workspace's event counter until commit.
      await this.events.emit(
        manager,
        workspace.ref,
        'part',
        { action: 'created', partId: row.id, partNumber, name: row.name, domain, lifecycle },
        { actor: { id: actor.id, username: actor.username } },
      );
      return presentPart(row, workspace.name, new Map([[actor.id, actor.username]]));
    });
  }

  /**
   * Parts another feature's change creates in its own transaction (`workspace` on that transaction's
   * manager): the fields a blank import row gives (domain `other`, prototype), the name and unit
   * given, and each a `created` history entry with `origin`. No `part` event: the caller's own event
   * reports them.
   */
  async createFor(
    workspace: WorkspaceScope,
    actor: CollabUserEntity,
    wanted: CatalogPart[],
    origin: Record<string, unknown>,
  ): Promise<PartEntity[]> {
    const parts = new PartsRepository(workspace);
    const now = new Date();
    const created: PartEntity[] = [];
    for (const { partNumber, name, uom } of wanted) {
      const part = await parts.insert({
        id: newId(),
        partNumber,
        ...NEW_PART,
        name,
        uom,
        tags: [],
        attributes: {},
        createdBy: actor.id,
        createdAt: now,
        updatedAt: now,
      });
      await parts.appendHistory(part, actor.id, 'created', { partNumber, ...origin });
      created.push(part);
    }
    return created;
  }

  async list(workspace: WorkspaceScope, query: ListPartsQuery): Promise<PartList> {
    const { rows, total, exact, names } = await this.partsIn(workspace).search(query);
    return {
      items: rows.map((r) => presentPart(r, workspace.name, names)),
      total,
      totalExact: exact,
      page: query.page ?? 1,
      pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE,
    };
  }

  /** The part with its versions (newest first) and its audit history (oldest first). */
  async detail(workspace: WorkspaceScope, partId: string): Promise<PartDetail> {
    const parts = this.partsIn(workspace);
    const part = await parts.findInWorkspace(partId);
    const [versions, history] = [await parts.versionsOf(part), await parts.historyOf(part)];
    const names = await usernames(this.dataSource.manager, [
      part.createdBy,
      ...versions.flatMap(versionActors),
      ...history.map((h) => h.actor),
    ]);
    return {
      ...presentPart(part, workspace.name, names),
      versions: versions.map((v) => presentVersion(v, names)),
      history: history.map((h) => presentHistory(h, names)),
    };
  }

  /** Engineer+; a lifecycle change needs manager+ (403) and a move of DECISIONS.md section 5 (409). */
  async update(
    actor: CollabUserEntity,
    workspace: WorkspaceScope,
    partId: string,
    request: UpdatePartRequest,
  ): Promise<Part> {
    this.checkCurrency(request.currency);
    return this.dataSource.transaction(async (manager) => {
      const parts = this.partsIn(workspace, manager);
      const part = await parts.lockForUpdate(partId);
      const next = request.lifecycle;
      const lifecycleChange = next !== undefined && next !== part.lifecycle;
      if (lifecycleChange) {
        if (!atLeast(workspace.role, 'manager'))
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
        const rules = await this.settings.rules(workspace.in(manager));
        this.checkTemplate(rules, (patch.domain ?? part.domain) as PartDomain, {
          ...((patch.attributes ?? part.attributes) as Record<string, unknown>),
        });
      }
      if (Object.keys(patch).length === 0 && !lifecycleChange) {
        return presentPart(part, workspace.name, await usernames(manager, [part.createdBy]));
      }
      const previous = part.lifecycle;
      Object.assign(part, patch, lifecycleChange ? { lifecycle: next } : {}, { updatedAt: new Date() });
      await parts.save(part);
      const changed = Object.keys(changes).length > 0;
      if (changed) await parts.appendHistory(part, actor.id, 'updated', changes);
      if (lifecycleChange) {
        await parts.appendHistory(part, actor.id, 'lifecycle', { lifecycle: { from: previous, to: next } });
      }
      // One event per change, last: emitting locks the workspace's event counter until commit.
      const about = { partId: part.id, partNumber: part.partNumber, ...(changed ? { changes } : {}) };
      await this.events.emit(
        manager,
        workspace.ref,
        'part',
        lifecycleChange
          ? { action: 'lifecycle', ...about, lifecycle: next, previous }
          : { action: 'updated', ...about },
        { actor: { id: actor.id, username: actor.username } },
      );
      return presentPart(part, workspace.name, await usernames(manager, [part.createdBy]));
    });
  }

  /** Assemblies whose BOMs reference the part. */
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
}
