import {
  DEFAULT_PAGE_SIZE,
  type FileList,
  type FilePermissions,
  type FileRecord,
  type FileRevision,
  type FileRevisionList,
  type FileUploadedData,
  type ListFilesQuery,
  type PageQuery,
  RoutingKeys,
  type TenantRole,
  type UploadFileForm,
} from '@hwp/contracts';
import type { Bus, StoredUpload } from '@hwp/platform';
import {
  type BlobStore,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  newId,
  ValidationError,
} from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import { TenantScope } from '../tenancy/tenant-scope';
import type { TenantsService } from '../tenancy/tenants.service';
import { FileEntity, FileRevisionEntity } from './file.entity';
import { fileName, folderPath, mimeTypeOf } from './file-names';
import { type FileAction, type FileActor, may, NO_PERMISSIONS } from './file-permissions';
import { previewKey } from './file-processing';
import { presentFile, presentRevision } from './files.presenter';
import { FilesRepository } from './files.repository';
import { SharedFilesRepository } from './shared-files.repository';

/** A file and its current revision, as a route that serves bytes needs them. */
export interface OpenedFile {
  file: FileEntity;
  revision: FileRevisionEntity;
}

/**
 * Files of a tenant (section 4.3, DECISIONS.md section 3): uploads become revisions, bytes live in
 * the blob store under the tenant's prefix, every change goes out as `file.uploaded.v1` through the
 * outbox for the processing pipeline.
 */
export class FilesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly blobs: BlobStore,
    private readonly tenants: TenantsService,
  ) {}

  private repo(tenant: ResolvedTenant, manager: EntityManager = this.dataSource.manager): FilesRepository {
    return new FilesRepository(tenant.scope.in(manager), manager);
  }

  async actor(userId: string, tenant: ResolvedTenant): Promise<FileActor> {
    const teams = await this.tenants.membershipsOf(userId);
    return { userId, teamIds: teams.map((t) => t.id), role: tenant.role };
  }

  /**
   * Of `readers` (members of the file's tenant, with their role), the users who may view the file:
   * nobody once it is gone. Which readers belong to the teams (tenants) the permission lists name is
   * read in one query, and only when the lists name someone.
   */
  async viewersAmong(
    tenant: ResolvedTenant,
    fileId: string,
    readers: { userId: string; role: TenantRole }[],
  ): Promise<Set<string>> {
    const file = await this.repo(tenant).findFile(fileId, false);
    if (!file) return new Set();
    const { view, edit, delete: del } = file.permissions;
    const named = [...new Set([...view, ...edit, ...del])];
    const pairs = readers.flatMap(({ userId }) => named.map((tenantId) => ({ userId, tenantId })));
    const member = pairs.length ? await this.tenants.memberships(this.dataSource.manager, pairs) : new Set();
    const viewers = new Set<string>();
    for (const { userId, role } of readers) {
      const teamIds = named.filter((id) => member.has(`${userId}|${id}`));
      if (may(file, { userId, teamIds, role }, 'view')) viewers.add(userId);
    }
    return viewers;
  }

  /** The file if the actor may `action` it: 404 when they cannot even see it, 403 when they see it only. */
  private async authorized(
    repo: FilesRepository,
    actor: FileActor,
    id: string,
    action: FileAction,
    lock = false,
  ): Promise<FileEntity> {
    const file = await repo.findFile(id, lock);
    if (!file || !may(file, actor, 'view')) throw new NotFoundError('File not found');
    if (!may(file, actor, action)) throw new ForbiddenError(`You may not ${action} this file`);
    return file;
  }

  private async record(repo: FilesRepository, file: FileEntity): Promise<FileRecord> {
    const revision = await repo.currentRevision(file);
    if (!revision) throw new Error(`file ${file.id} has no current revision`);
    return presentFile(file, revision);
  }

  private async announce(
    manager: EntityManager,
    tenantId: string,
    actor: string,
    revision: FileRevisionEntity,
  ) {
    const data: FileUploadedData = {
      fileId: revision.fileId,
      revisionId: revision.id,
      key: revision.blobKey,
      size: revision.size,
      sha256: revision.sha256,
      mimeType: revision.mimeType,
    };
    await this.bus.outbox.add(manager, { type: RoutingKeys.fileUploaded, tenantId, actor, data });
  }

  /**
   * Registers stored bytes as a new file, or as a new revision of the file of that name in that
   * folder (`replace_if_exists`; else 409). The object is removed when nothing is registered.
   */
  async register(
    tenant: ResolvedTenant,
    userId: string,
    stored: StoredUpload,
    form: UploadFileForm,
  ): Promise<FileRecord> {
    try {
      const name = fileName(stored.originalName);
      const folder = folderPath(form.folder_path);
      const actor = await this.actor(userId, tenant);
      return await this.bus.transaction(async (manager) => {
        const repo = this.repo(tenant, manager);
        const now = new Date();
        const existing = await repo.findByPath(folder, name);
        if (existing && !form.replace_if_exists) {
          throw new ConflictError(
            `A file named "${name}" exists in ${folder}; send replace_if_exists=true for a new revision`,
            {
              field: 'file',
              file_id: may(existing, actor, 'view') ? existing.id : undefined,
            },
          );
        }
        if (existing) {
          if (!may(existing, actor, 'view'))
            throw new ConflictError(`A file named "${name}" exists in ${folder}`);
          if (!may(existing, actor, 'edit')) throw new ForbiddenError('You may not edit this file');
        }
        const file =
          existing ??
          (await repo.files.insert({
            id: newId(),
            folderPath: folder,
            name,
            productId: form.product_id ?? null,
            description: form.description ?? '',
            tags: form.tags ?? [],
            isPublic: form.public ?? false,
            permissions: NO_PERMISSIONS,
            currentRevisionId: stored.id,
            revisionCount: 0,
            createdBy: userId,
            createdAt: now,
            updatedAt: now,
          }));
        const revision = await repo.revisions.insert({
          id: stored.id,
          fileId: file.id,
          number: file.revisionCount + 1,
          name,
          blobKey: stored.key,
          size: stored.size,
          sha256: stored.sha256,
          mimeType: mimeTypeOf(name),
          createdBy: userId,
          createdAt: now,
          revertedFrom: null,
          processingStatus: 'pending',
          processingError: null,
          classification: null,
          metadata: {},
          stages: {},
          textContent: null,
        });
        file.currentRevisionId = revision.id;
        file.revisionCount += 1;
        file.updatedAt = now;
        if (existing) {
          if (form.description !== undefined) file.description = form.description;
          if (form.tags !== undefined) file.tags = form.tags;
          if (form.product_id !== undefined) file.productId = form.product_id;
        }
        await repo.files.save(file);
        await repo.reindex(file.id);
        await this.announce(manager, tenant.id, userId, revision);
        return presentFile(file, revision);
      });
    } catch (error) {
      await this.blobs.delete(stored.key).catch(() => undefined);
      throw error;
    }
  }

  async list(tenant: ResolvedTenant, userId: string, query: ListFilesQuery): Promise<FileList> {
    const actor = await this.actor(userId, tenant);
    const repo = this.repo(tenant);
    const folder = query.folder_path !== undefined ? folderPath(query.folder_path) : undefined;
    const privileged = tenant.role === 'owner' || tenant.role === 'admin';
    const [files, total] = await repo.search(
      query,
      { userId, teamIds: [...actor.teamIds], privileged },
      folder,
    );
    // One query for all current revisions of the page (not one per file).
    const revisions = await repo.currentRevisions(files);
    const items = files.flatMap((file) => {
      const revision = revisions.get(file.currentRevisionId);
      return revision ? [presentFile(file, revision)] : [];
    });
    return { items, total, page: query.page ?? 1, pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE };
  }

  async get(tenant: ResolvedTenant, userId: string, id: string): Promise<FileRecord> {
    const repo = this.repo(tenant);
    const file = await this.authorized(repo, await this.actor(userId, tenant), id, 'view');
    return this.record(repo, file);
  }

  /** The file and the revision to serve, for a member allowed to view it. */
  async open(tenant: ResolvedTenant, userId: string, id: string): Promise<OpenedFile> {
    const repo = this.repo(tenant);
    const file = await this.authorized(repo, await this.actor(userId, tenant), id, 'view');
    const revision = await repo.currentRevision(file);
    if (!revision) throw new NotFoundError('File not found');
    return { file, revision };
  }

  /**
   * The file at a record's `path` (virtual folder path plus name, section 2.4) in the tenant, for a
   * member allowed to view it: as `open`, by path instead of id. Unknown or unseen: 404.
   */
  async openByPath(tenant: ResolvedTenant, userId: string, path: string, field: string): Promise<OpenedFile> {
    const cut = path.lastIndexOf('/');
    let folder: string;
    let name: string;
    try {
      folder = folderPath(cut <= 0 ? '/' : path.slice(0, cut));
      name = fileName(path.slice(cut + 1));
    } catch {
      throw new ValidationError(`${field} must name a file: /folder/name`, [
        { field, message: 'not a file path' },
      ]);
    }
    const file = await this.repo(tenant).findAt(folder, name);
    if (!file) throw new NotFoundError('File not found');
    return this.open(tenant, userId, file.id);
  }

  /** The file a file access token opens (the token is the permission: issued to a viewer, this file only). */
  async openForToken(claims: { tenantId: string; fileId: string }): Promise<OpenedFile> {
    const repo = new FilesRepository(
      new TenantScope(this.dataSource.manager, claims.tenantId),
      this.dataSource.manager,
    );
    const file = await repo.findFile(claims.fileId);
    const revision = file ? await repo.currentRevision(file) : null;
    if (!file || !revision) throw new NotFoundError('File not found');
    return { file, revision };
  }

  /** The caller's ids (user and tenants) and the tenants they belong to, for the cross-tenant reads. */
  private async sharedViewer(userId: string): Promise<{ ids: string[]; memberOf: string[] }> {
    const memberOf = (await this.tenants.membershipsOf(userId)).map((t) => t.id);
    return { ids: [userId, ...memberOf], memberOf };
  }

  /** Files of other tenants whose permissions name the caller or one of their teams (`GET /shared-with-me`). */
  async sharedWithMe(userId: string, query: PageQuery): Promise<FileList> {
    const shared = new SharedFilesRepository(this.dataSource.manager);
    const { ids, memberOf } = await this.sharedViewer(userId);
    const [files, total] = await shared.page(ids, memberOf, query);
    const items = [];
    for (const file of files) {
      const revision = await shared.revision(file);
      if (revision) items.push(presentFile(file, revision));
    }
    return { items, total, page: query.page ?? 1, pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE };
  }

  /** One file shared with the caller from another tenant; 404 when it names neither them nor their teams. */
  async openShared(userId: string, fileId: string): Promise<OpenedFile> {
    const shared = new SharedFilesRepository(this.dataSource.manager);
    const { ids, memberOf } = await this.sharedViewer(userId);
    const file = await shared.one(ids, memberOf, fileId);
    const revision = file ? await shared.revision(file) : null;
    if (!file || !revision) throw new NotFoundError('File not found');
    return { file, revision };
  }

  /** Deletes the file, its revisions and annotations; the bytes go once the rows are gone. */
  async remove(tenant: ResolvedTenant, userId: string, id: string): Promise<void> {
    const actor = await this.actor(userId, tenant);
    const keys = await this.dataSource.transaction(async (manager) => {
      const repo = this.repo(tenant, manager);
      const file = await this.authorized(repo, actor, id, 'delete', true);
      const revisions = await repo.revisionsOf(file.id);
      await repo.files.delete({ id: file.id });
      // Every preview a revision may have, recorded yet or not: processing may be drawing them now.
      const previews = revisions.flatMap((r) => [
        ...Object.values((r.stages.preview ?? {}) as Record<string, string>),
        previewKey(tenant.id, r.id, 'preview'),
        previewKey(tenant.id, r.id, 'thumbnail'),
      ]);
      return [...new Set([...revisions.map((r) => r.blobKey), ...previews])];
    });
    for (const key of keys) await this.blobs.delete(key).catch(() => undefined);
  }

  async revisions(
    tenant: ResolvedTenant,
    userId: string,
    id: string,
    query: PageQuery,
  ): Promise<FileRevisionList> {
    const repo = this.repo(tenant);
    const file = await this.authorized(repo, await this.actor(userId, tenant), id, 'view');
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const [rows, total] = await repo.revisionsPage(file.id, page, pageSize);
    return { items: rows.map((r) => presentRevision(r, file)), total, page, pageSize };
  }

  async revision(
    tenant: ResolvedTenant,
    userId: string,
    id: string,
    revisionId: string,
  ): Promise<FileRevision> {
    const repo = this.repo(tenant);
    const file = await this.authorized(repo, await this.actor(userId, tenant), id, 'view');
    const revision = await repo.findRevision(file.id, revisionId);
    if (!revision) throw new NotFoundError('Revision not found');
    return presentRevision(revision, file);
  }

  /** A new revision with the old one's bytes and metadata; history is never rewritten. */
  async revert(tenant: ResolvedTenant, userId: string, id: string, revisionId: string): Promise<FileRecord> {
    const actor = await this.actor(userId, tenant);
    return this.bus.transaction(async (manager) => {
      const repo = this.repo(tenant, manager);
      const file = await this.authorized(repo, actor, id, 'edit', true);
      const old = await repo.findRevision(file.id, revisionId);
      if (!old) throw new NotFoundError('Revision not found');
      const now = new Date();
      const revision = await repo.revisions.insert({
        ...old,
        id: newId(),
        number: file.revisionCount + 1,
        createdBy: userId,
        createdAt: now,
        revertedFrom: old.id,
      });
      await repo.copyText(old.id, revision.id);
      file.currentRevisionId = revision.id;
      file.revisionCount += 1;
      file.updatedAt = now;
      await repo.files.save(file);
      await repo.reindex(file.id);
      // Processing stages are copied with the bytes: a redelivery of this event finds them done.
      await this.announce(manager, tenant.id, userId, revision);
      return presentFile(file, revision);
    });
  }

  /** Replaces the lists (the uploader and tenant admins only). */
  async setPermissions(
    tenant: ResolvedTenant,
    userId: string,
    id: string,
    permissions: FilePermissions,
  ): Promise<FileRecord> {
    const actor = await this.actor(userId, tenant);
    return this.dataSource.transaction(async (manager) => {
      const repo = this.repo(tenant, manager);
      const file = await this.authorized(repo, actor, id, 'view', true);
      if (file.createdBy !== userId && tenant.role !== 'owner' && tenant.role !== 'admin') {
        throw new ForbiddenError('Only the uploader or a tenant admin may change who can reach this file');
      }
      const unique = (ids: string[]) => [...new Set(ids.map((i) => i.toLowerCase()))];
      file.permissions = {
        view: unique(permissions.view),
        edit: unique(permissions.edit),
        delete: unique(permissions.delete),
      };
      file.updatedAt = new Date();
      await repo.files.save(file);
      return this.record(repo, file);
    });
  }
}
