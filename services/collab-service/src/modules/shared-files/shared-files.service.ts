import type {
  FileMeta,
  FileVersionList,
  SharedFileList,
  TextPreview,
  Timeline,
  TimelineEntry,
  UploadResult,
} from '@hwp/contracts';
import { TEXT_PREVIEW_MAX_BYTES } from '@hwp/contracts';
import { AppError, type BlobStore, NotFoundError, newId } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { FileCommentsRepository } from './file-comments.repository';
import { type FileEvents, liveFile, presentFile, presentListed, presentLock } from './file-guards';
import { type FilePath, parsePath, pathOf, versionKey } from './file-paths';
import { LiveHeads } from './live-heads';
import type { SharedFileEntity } from './shared-file.entity';
import { SharedFilesRepository, type VersionRow } from './shared-files.repository';

/** Timeline entries of a path (its `workspace/username/filename` form) kept by another feature. */
export type TimelineSource = (access: WorkspaceScope, path: string) => Promise<TimelineEntry[]>;

export interface SharedFilesOptions {
  trashRetentionDays: number;
}

/**
 * Files and their history as the collaboration host reads them (lists, metadata, previews, versions,
 * the timeline), and what its writers share: the scope's repository, byte copies and version
 * events. Writes are FileWrites, the trash FileTrash, branches and conflicts FileBranchesService.
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

  async list(access: WorkspaceScope, username?: string): Promise<SharedFileList> {
    const rows = await this.repo(access).list(username);
    return { items: rows.map((row) => presentListed(access.name, row)) };
  }

  async meta(access: WorkspaceScope, target: FilePath, branch?: string): Promise<FileMeta> {
    const repo = this.repo(access);
    const file = await liveFile(repo, target);
    const head = await repo.head(file, branch);
    if (!head) throw new NotFoundError(`No branch ${branch} of ${pathOf(target)}`);
    const lock = await repo.locks.validLock(pathOf(target));
    return { ...presentFile(access.name, file, head), lock: lock ? presentLock(lock) : null };
  }

  /** A file's newest version (a branch's head when `branch`), for features derived from its content. */
  async headOf(
    access: WorkspaceScope,
    target: FilePath,
    branch?: string,
  ): Promise<{ file: SharedFileEntity; version: VersionRow }> {
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
      const rows = await new FileCommentsRepository(access.in(this.dataSource.manager)).onPath(
        pathOf(target),
      );
      for (const c of rows)
        items.push({
          type: 'comment',
          id: c.id,
          at: c.createdAt.toISOString(),
          author: c.authorUsername,
          text: c.body,
        });
    }
    for (const [type, source] of this.timelineSources)
      if (wanted.has(type)) items.push(...(await source(access, pathOf(target))));
    items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? 1 : -1));
    return { items };
  }

  /** Copies a version's bytes to a new version key of another file (so purging one never breaks the other). */
  async copyBytes(from: VersionRow, to: FilePath): Promise<{ id: string; key: string }> {
    const id = newId();
    const key = versionKey(to, id);
    await this.blobs.copy(from.blob_key, key);
    return { id, key };
  }

  async emitVersion(
    manager: EntityManager,
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
