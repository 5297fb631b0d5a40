import type {
  BatchUploadEntry,
  DeleteResult,
  FileMeta,
  FileVersionList,
  SharedFileList,
  TextPreview,
  Timeline,
  TimelineEntry,
  TrashList,
  UploadResult,
} from '@hwp/contracts';
import { TEXT_PREVIEW_MAX_BYTES } from '@hwp/contracts';
import {
  AppError,
  type BlobStore,
  ConflictError,
  NotFoundError,
  newId,
  type StoredUpload,
  toAppError,
} from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import {
  assertCanWrite,
  assertUnlocked,
  type FileEvents,
  liveFile,
  presentFile,
  presentListed,
  presentLock,
} from './file-guards';
import { checkFilename, conflictName, type FilePath, parsePath, pathOf, versionKey } from './file-paths';
import { LiveHeads } from './live-heads';
import { type FileRow, SharedFilesRepository, type VersionRow } from './shared-files.repository';

/** Timeline entries of a path (its `workspace/username/filename` form) kept by another feature. */
export type TimelineSource = (access: WorkspaceScope, path: string) => Promise<TimelineEntry[]>;

export interface WriteOptions {
  baseVersion?: string;
  replace: boolean;
  message?: string;
  /** A branch of the file (branch writes in the `branch` column). */
  branch?: string;
}

export interface SharedFilesOptions {
  trashRetentionDays: number;
}

/** A sane `type/subtype` from the client, else by nothing: octet-stream (bytes are served with nosniff). */
function contentTypeOf(clientType: string): string {
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(clientType)
    ? clientType.toLowerCase()
    : 'application/octet-stream';
}

/**
 * Files, versions, the trash and history of the collaboration host. Every write takes the file's row
 * lock first, so the etag an upload is compared with is the one it replaces: two racing uploads
 * with the same `baseVersion` can never both win; the loser is kept whole as a `_conflict_` copy.
 */
export class SharedFilesService {
  /** Live heads of served files, kept between changes of their workspace (see LiveHeads). */
  private readonly heads = new LiveHeads<VersionRow>();

  constructor(
    private readonly dataSource: DataSource,
    readonly blobs: BlobStore,
    private readonly events: FileEvents,
    private readonly options: SharedFilesOptions,
  ) {}

  /** Something in the workspace changed (committed here or on another replica): its served heads are read again. */
  changed(workspaceId: string): void {
    this.heads.changed(workspaceId);
  }

  /** The live head a read of `/v1/serve/...` answers from; null when there is no such live file. */
  servedHead(access: WorkspaceScope, username: string, filename: string): Promise<VersionRow | null> {
    return this.heads.get(access.id, `${username}/${filename}`, () =>
      this.repo(access).liveHead(username, filename),
    );
  }

  get trashRetentionDays(): number {
    return this.options.trashRetentionDays;
  }

  repo(access: WorkspaceScope, manager = this.dataSource.manager) {
    return new SharedFilesRepository(access.in(manager));
  }

  /** The upload route's answer for one stored part: 201 with the version, or the error it is. */
  async write(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    target: FilePath,
    stored: StoredUpload,
    options: WriteOptions,
  ): Promise<UploadResult> {
    let keep = false;
    try {
      const outcome = await this.dataSource.transaction(async (manager) => {
        const repo = this.repo(access, manager);
        const path = pathOf(target);
        await assertUnlocked(repo, path, actor);
        const branch = options.branch && options.branch !== 'main' ? options.branch : undefined;
        let file = await repo.live(target.username, target.filename, true);
        const version = {
          id: stored.id,
          blobKey: stored.key,
          sha256: stored.sha256,
          size: stored.size,
          contentType: contentTypeOf(stored.clientType),
          message: options.message?.trim() || null,
          authorId: actor.id,
          source: 'upload' as const,
          branch,
        };
        if (!file) {
          if (branch) throw new NotFoundError(`No file ${path} to write the branch ${branch} of`);
          file = await repo.create(target.username, target.filename);
          const created = await repo.addVersion(file, version);
          keep = true;
          await this.emitVersion(manager, access, actor, path, created, 'created');
          return { kind: 'written' as const, version: created };
        }
        const head = await repo.head(file, branch);
        if (!head) throw new NotFoundError(`No branch ${branch} of ${path}; create it first`);
        if (!options.replace && head.sha256 !== stored.sha256 && options.baseVersion !== head.sha256) {
          const copy = await this.keepConflict(repo, actor, target, file, version);
          keep = true;
          return { kind: 'conflict' as const, head, copy };
        }
        if (!options.replace && head.sha256 === stored.sha256) {
          // The same bytes again: nothing changes (and no conflict).
          return { kind: 'written' as const, version: head };
        }
        const written = await repo.addVersion(file, version);
        keep = true;
        await this.emitVersion(manager, access, actor, path, written, 'updated');
        return { kind: 'written' as const, version: written };
      });
      if (outcome.kind === 'conflict') {
        throw new AppError(
          'version_conflict',
          `${pathOf(target)} changed since ${options.baseVersion ? `etag ${options.baseVersion}` : 'you last saw it'}; your upload was kept as ${outcome.copy.filename}`,
          {
            extra: {
              currentEtag: outcome.head.sha256,
              conflict: { filename: outcome.copy.filename, etag: stored.sha256, versionId: stored.id },
            },
          },
        );
      }
      return presentUpload(target.filename, outcome.version);
    } finally {
      if (!keep) await this.blobs.delete(stored.key).catch(() => undefined);
    }
  }

  /** The losing upload as `<stem>_conflict_<username>_<time><.ext>` beside the file, and its conflict row. */
  private async keepConflict(
    repo: SharedFilesRepository,
    actor: CollabUserEntity,
    target: FilePath,
    base: FileRow,
    version: Parameters<SharedFilesRepository['addVersion']>[1],
  ) {
    const now = new Date();
    let filename = conflictName(target.filename, actor.username, now);
    for (let n = 2; (await repo.live(target.username, filename)) || Buffer.byteLength(filename) > 255; n++) {
      if (n > 1000) throw new ConflictError('Too many conflict copies of this file');
      filename = conflictName(target.filename.slice(0, 180), actor.username, now, n);
    }
    const file = await repo.create(target.username, filename);
    await repo.addVersion(file, { ...version, source: 'conflict', branch: undefined });
    await repo.manager.query(
      'INSERT INTO shared_file_conflicts (id, workspace_id, base_file_id, conflict_file_id, author_id) VALUES ($1, $2, $3, $4, $5)',
      [newId(), repo.scope.id, base.id, file.id, actor.id],
    );
    await this.events.emit(
      repo.manager,
      repo.scope.ref,
      'conflict',
      {
        action: 'created',
        path: pathOf(target),
        conflictPath: pathOf({ ...target, filename }),
        etag: version.sha256,
      },
      { actor, path: pathOf(target) },
    );
    return { filename };
  }

  /** `POST /v1/uploads`: each file on its own (a failure of one does not undo the others). */
  async writeBatch(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    username: string,
    uploads: StoredUpload[],
    options: WriteOptions,
  ): Promise<BatchUploadEntry[]> {
    const entries: BatchUploadEntry[] = [];
    for (const stored of uploads) {
      try {
        const target = { workspace: access.name, username, filename: checkFilename(stored.originalName) };
        entries.push({
          filename: stored.originalName,
          status: 201,
          result: await this.write(actor, access, target, stored, options),
        });
      } catch (error) {
        await this.blobs.delete(stored.key).catch(() => undefined);
        const failure = toAppError(error);
        if (failure.status >= 500) throw error;
        const conflict = (failure.extra as { conflict?: BatchUploadEntry['conflict'] } | undefined)?.conflict;
        entries.push({
          filename: stored.originalName,
          status: failure.status,
          code: failure.code,
          detail: failure.detail,
          ...(conflict ? { conflict } : {}),
        });
      }
    }
    return entries;
  }

  async list(access: WorkspaceScope, username?: string): Promise<SharedFileList> {
    const rows = await this.repo(access).list(username);
    return { items: rows.map((row) => presentListed(access.name, row)) };
  }

  async meta(access: WorkspaceScope, target: FilePath, branch?: string): Promise<FileMeta> {
    const repo = this.repo(access);
    const file = await liveFile(repo, target);
    const head = await repo.head(file, branch);
    if (!head) throw new NotFoundError(`No branch ${branch} of ${pathOf(target)}`);
    const lock = await repo.validLock(pathOf(target));
    return { ...presentFile(access.name, file, head), lock: lock ? presentLock(lock) : null };
  }

  /** A file's newest version (a branch's head when `branch`), for features derived from its content. */
  async headOf(
    access: WorkspaceScope,
    target: FilePath,
    branch?: string,
  ): Promise<{ file: FileRow; version: VersionRow }> {
    const repo = this.repo(access);
    const file = await liveFile(repo, target);
    const version = await repo.head(file, branch);
    if (!version) throw new NotFoundError(`No branch ${branch} of ${pathOf(target)}`);
    return { file, version };
  }

  /** A small text file's content; binary content or a file over 1 MB answers 415. */
  async preview(access: WorkspaceScope, target: FilePath, branch?: string): Promise<TextPreview> {
    const repo = this.repo(access);
    const file = await liveFile(repo, target);
    const head = await repo.head(file, branch);
    if (!head) throw new NotFoundError(`No branch ${branch} of ${pathOf(target)}`);
    const size = Number(head.size);
    if (size > TEXT_PREVIEW_MAX_BYTES) {
      throw new AppError(
        'unsupported_media_type',
        `Previews show text files up to 1 MB; this one has ${size} bytes`,
      );
    }
    const got = await this.blobs.get(head.blob_key);
    const chunks: Buffer[] = [];
    for await (const chunk of got.body) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
    if (bytes.includes(0) || text.includes('\ufffd')) {
      throw new AppError(
        'unsupported_media_type',
        `${target.filename} is not text (UTF-8); download it instead`,
      );
    }
    return { filename: target.filename, contentType: head.content_type, etag: head.sha256, text };
  }

  /** Soft delete into the trash (respects locks). */
  async remove(actor: CollabUserEntity, access: WorkspaceScope, target: FilePath): Promise<DeleteResult> {
    return this.dataSource.transaction(async (manager) => {
      const repo = this.repo(access, manager);
      assertCanWrite(access, actor, target.username);
      await assertUnlocked(repo, pathOf(target), actor);
      const file = await liveFile(repo, target, true);
      const trashed = await repo.trash(file, actor.id, this.options.trashRetentionDays);
      await this.events.emit(
        manager,
        access.ref,
        'update',
        { action: 'deleted', path: pathOf(target), key: file.id },
        {
          actor,
          path: pathOf(target),
        },
      );
      return { key: file.id, purgeAt: (trashed.purge_at as Date).toISOString() };
    });
  }

  /** A folder's trash, after purging what is past its retention (their blobs too). */
  async trash(access: WorkspaceScope, username: string): Promise<TrashList> {
    await this.purge(access);
    const rows = await this.repo(access).trashed(username);
    return {
      items: rows.map((r) => ({
        key: r.id,
        workspace: access.name,
        username: r.username,
        filename: r.filename,
        size: Number(r.size),
        deletedAt: (r.deleted_at as Date).toISOString(),
        deletedBy: r.deleted_by_username,
        purgeAt: (r.purge_at as Date).toISOString(),
      })),
    };
  }

  async purge(access: WorkspaceScope): Promise<void> {
    const keys = await this.dataSource.transaction((manager) => this.repo(access, manager).purgeExpired());
    for (const key of keys) await this.blobs.delete(key).catch(() => undefined);
  }

  /** Back from the trash with every version; 409 when a live file took the name (unless renamed). */
  async restore(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    username: string,
    key: string,
    rename?: string,
  ): Promise<FileMeta> {
    const restored = await this.dataSource.transaction(async (manager) => {
      const repo = this.repo(access, manager);
      assertCanWrite(access, actor, username);
      const file = await repo.byId(key, true);
      if (!file?.deleted_at || file.username !== username)
        throw new NotFoundError('No such item in the trash');
      const filename = rename ? checkFilename(rename) : file.filename;
      await assertUnlocked(repo, pathOf({ workspace: access.name, username, filename }), actor);
      if (await repo.live(username, filename)) {
        throw new ConflictError(`A file named ${filename} exists; restore it under another name (filename)`, {
          field: 'filename',
        });
      }
      await repo.restore(file, filename);
      const path = pathOf({ workspace: access.name, username, filename });
      await this.events.emit(
        manager,
        access.ref,
        'update',
        { action: 'restored', path, key },
        { actor, path },
      );
      return { workspace: access.name, username, filename };
    });
    return this.meta(access, restored);
  }

  async versions(access: WorkspaceScope, path: string): Promise<FileVersionList> {
    const target = parsePath(path);
    const repo = this.repo(access);
    const file = await liveFile(repo, target);
    const rows = await repo.versions(file, pathOf(target));
    return {
      items: rows.map((v) => ({
        versionId: v.id,
        path: pathOf(target),
        number: v.number,
        etag: v.sha256,
        size: Number(v.size),
        contentType: v.content_type,
        message: v.message,
        author: v.author_username,
        createdAt: v.created_at.toISOString(),
        branch: v.branch,
        source: v.source,
        comment: v.comment,
      })),
    };
  }

  private readonly timelineSources: [TimelineEntry['type'], TimelineSource][] = [];

  /** Entries another feature keeps on a path (the reviews feature adds its tasks). */
  addTimelineSource(type: TimelineEntry['type'], source: TimelineSource): void {
    this.timelineSources.push([type, source]);
  }

  /** Versions, comments and tasks of a path merged by time, newest first (`types` filters). */
  async timeline(access: WorkspaceScope, path: string, types?: string): Promise<Timeline> {
    const target = parsePath(path);
    const wanted = new Set((types ?? 'version,comment,task').split(','));
    const items: TimelineEntry[] = [];
    if (wanted.has('version')) {
      const file = await this.repo(access).live(target.username, target.filename);
      if (file) {
        for (const v of (await this.versions(access, path)).items)
          items.push({
            type: 'version',
            id: v.versionId,
            at: v.createdAt,
            author: v.author,
            text: v.message,
          });
      }
    }
    if (wanted.has('comment')) {
      const rows: { id: string; created_at: Date; author_username: string; body: string }[] =
        await this.dataSource.query(
          'SELECT id, created_at, author_username, body FROM shared_file_comments WHERE workspace_id = $1 AND path = $2',
          [access.id, pathOf(target)],
        );
      for (const c of rows)
        items.push({
          type: 'comment',
          id: c.id,
          at: c.created_at.toISOString(),
          author: c.author_username,
          text: c.body,
        });
    }
    for (const [type, source] of this.timelineSources)
      if (wanted.has(type)) items.push(...(await source(access, pathOf(target))));
    items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? 1 : -1));
    return { items };
  }

  /** A new version equal to an earlier one, for everyone (respects locks). */
  async revert(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    path: string,
    versionId: string,
    message?: string,
  ) {
    const target = parsePath(path);
    return this.dataSource.transaction(async (manager) => {
      const repo = this.repo(access, manager);
      assertCanWrite(access, actor, target.username);
      await assertUnlocked(repo, pathOf(target), actor);
      const file = await liveFile(repo, target, true);
      const old = await repo.version(file, versionId);
      if (!old) throw new NotFoundError(`No version ${versionId} of ${pathOf(target)}`);
      const written = await repo.addVersion(file, {
        id: newId(),
        blobKey: old.blob_key,
        sha256: old.sha256,
        size: Number(old.size),
        contentType: old.content_type,
        message: message?.trim() || `Reverted to version ${old.number}`,
        authorId: actor.id,
        source: 'revert',
      });
      await this.emitVersion(manager, access, actor, pathOf(target), written, 'reverted');
      return presentUpload(target.filename, written);
    });
  }

  /** Copies a version's bytes to a new version key of another file (so purging one never breaks the other). */
  async copyBytes(from: VersionRow, to: FilePath): Promise<{ id: string; key: string }> {
    const id = newId();
    const key = versionKey(to, id);
    await this.blobs.copy(from.blob_key, key);
    return { id, key };
  }

  async emitVersion(
    manager: import('typeorm').EntityManager,
    access: WorkspaceScope,
    actor: CollabUserEntity,
    path: string,
    version: VersionRow,
    action: string,
  ): Promise<void> {
    const data = {
      action,
      path,
      versionId: version.id,
      etag: version.sha256,
      branch: version.branch,
      number: version.number,
    };
    await this.events.emit(manager, access.ref, 'version', data, { actor, path });
    await this.events.emit(manager, access.ref, 'update', data, { actor, path });
  }
}

export function presentUpload(filename: string, version: VersionRow): UploadResult {
  return {
    filename,
    etag: version.sha256,
    size: Number(version.size),
    contentType: version.content_type,
    sha256: version.sha256,
    versionId: version.id,
    branch: version.branch === 'main' ? null : version.branch,
  };
}
