import type {
  CreatePartVersionRequest,
  PartVersion,
  PartVersionList,
  UpdatePartVersionRequest,
} from '@hwp/contracts';
import { ConflictError, newId } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { usernames } from '../identity/usernames';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { notSubmitted } from './approval-columns';
import { checkMove, MOVES, type Move, PAST } from './approval-flow';
import type { PartEntity, PartVersionEntity } from './part.entity';
import { presentVersion, versionActors } from './parts.presenter';
import { PartsRepository } from './parts.repository';
import type { PartEvents } from './parts.service';

/**
 * Part versions and their approval flow (DECISIONS.md section 5): draft -submit-> in_review
 * -approve-> approved; in_review -reject(reason)-> rejected -edit-> draft. Every step is audited in
 * the part's history and sent to the workspace's stream as a `part` event, in one transaction.
 */
export class PartVersionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: PartEvents,
  ) {}

  private partsIn(workspace: WorkspaceScope, manager: EntityManager = this.dataSource.manager) {
    return new PartsRepository(workspace.in(manager));
  }

  async list(access: WorkspaceScope, partId: string): Promise<PartVersionList> {
    const parts = this.partsIn(access);
    const rows = await parts.versionsOf(await parts.findInWorkspace(partId));
    const names = await usernames(this.dataSource.manager, rows.flatMap(versionActors));
    return { items: rows.map((r) => presentVersion(r, names)) };
  }

  /** Engineer+. A new version starts as a draft; revisions are unique per part (409). */
  async create(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    partId: string,
    request: CreatePartVersionRequest,
  ): Promise<PartVersion> {
    return this.dataSource.transaction(async (manager) => {
      const parts = this.partsIn(access, manager);
      const part = await parts.lockForUpdate(partId);
      const revision = request.revision.trim();
      await this.checkRevisionFree(parts, part, revision);
      const now = new Date();
      const row: PartVersionEntity = {
        id: newId(),
        partId,
        revision,
        status: 'draft',
        changeNote: request.changeNote ?? null,
        data: request.data ?? {},
        createdBy: actor.id,
        createdAt: now,
        updatedAt: now,
        ...notSubmitted(),
      };
      await parts.saveVersion(row);
      await this.audit(parts, actor, part, row, 'created', { revision });
      return presentVersion(row, new Map([[actor.id, actor.username]]));
    });
  }

  /** Engineer+: edits a draft, or a rejected version (which returns to draft). */
  edit(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    partId: string,
    versionId: string,
    request: UpdatePartVersionRequest,
  ): Promise<PartVersion> {
    return this.move(actor, access, partId, versionId, 'edit', async (parts, part, row) => {
      const changes: Record<string, unknown> = {};
      const revision = request.revision?.trim();
      if (revision !== undefined && revision !== row.revision) {
        await this.checkRevisionFree(parts, part, revision);
        changes.revision = { from: row.revision, to: revision };
        row.revision = revision;
      }
      if (request.changeNote !== undefined && request.changeNote !== row.changeNote) {
        changes.changeNote = { from: row.changeNote, to: request.changeNote };
        row.changeNote = request.changeNote;
      }
      if (request.data !== undefined) {
        changes.data = { from: row.data, to: request.data };
        row.data = request.data;
      }
      if (row.status === 'rejected') changes.status = { from: 'rejected', to: 'draft' };
      row.rejectedBy = null;
      row.rejectedAt = null;
      return changes;
    });
  }

  /** Engineer+: draft -> in_review. */
  submit(actor: CollabUserEntity, access: WorkspaceScope, partId: string, versionId: string) {
    return this.move(actor, access, partId, versionId, 'submit', async (_parts, _part, row, now) => {
      row.submittedBy = actor.id;
      row.submittedAt = now;
      return {};
    });
  }

  /** Manager+: in_review -> approved; the approver and time are kept. */
  approve(actor: CollabUserEntity, access: WorkspaceScope, partId: string, versionId: string) {
    return this.move(actor, access, partId, versionId, 'approve', async (_parts, _part, row, now) => {
      row.approvedBy = actor.id;
      row.approvedAt = now;
      return {};
    });
  }

  /** Manager+: in_review -> rejected, with an optional reason. */
  reject(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    partId: string,
    versionId: string,
    reason?: string,
  ) {
    return this.move(actor, access, partId, versionId, 'reject', async (_parts, _part, row, now) => {
      row.rejectedBy = actor.id;
      row.rejectedAt = now;
      row.rejectionReason = reason?.trim() || null;
      return row.rejectionReason ? { reason: row.rejectionReason } : {};
    });
  }

  /** Locks the version, checks the move (409 when its status does not allow it), applies and audits it. */
  private async move(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    partId: string,
    versionId: string,
    move: Move,
    apply: (
      parts: PartsRepository,
      part: PartEntity,
      row: PartVersionEntity,
      now: Date,
    ) => Promise<Record<string, unknown>>,
  ): Promise<PartVersion> {
    return this.dataSource.transaction(async (manager) => {
      const parts = this.partsIn(access, manager);
      const part = await parts.findInWorkspace(partId);
      const row = await parts.lockVersion(part, versionId);
      checkMove(row.status, move, `version ${row.revision}`, 'version');
      const { to } = MOVES[move];
      const now = new Date();
      const previous = row.status;
      const changes = await apply(parts, part, row, now);
      row.status = to;
      row.updatedAt = now;
      await parts.saveVersion(row);
      await this.audit(parts, actor, part, row, PAST[move], { ...changes, from: previous, to });
      const names = await usernames(manager, versionActors(row));
      return presentVersion(row, names);
    });
  }

  private async checkRevisionFree(parts: PartsRepository, part: PartEntity, revision: string): Promise<void> {
    if (await parts.revisionTaken(part, revision))
      throw new ConflictError(`Revision ${revision} already exists`, { field: 'revision' });
  }

  /** History row, then the `part` event (last: emitting locks the workspace's event counter until commit). */
  private async audit(
    parts: PartsRepository,
    actor: CollabUserEntity,
    part: PartEntity,
    row: PartVersionEntity,
    action: string,
    changes: Record<string, unknown>,
  ): Promise<void> {
    await parts.appendHistory(part, actor.id, `version.${action}`, {
      versionId: row.id,
      revision: row.revision,
      ...changes,
    });
    await this.events.emit(
      parts.scope.manager,
      parts.scope.ref,
      'part',
      {
        action: `version.${action}`,
        partId: part.id,
        partNumber: part.partNumber,
        versionId: row.id,
        revision: row.revision,
        status: row.status,
      },
      { actor: { id: actor.id, username: actor.username } },
    );
  }
}
