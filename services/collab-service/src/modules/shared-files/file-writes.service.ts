import type { BatchUploadEntry, UploadResult } from '@hwp/contracts';
import { AppError, ConflictError, NotFoundError, newId, type StoredUpload, toAppError } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { FileConflictsRepository } from './file-conflicts.repository';
import { assertCanWrite, assertUnlocked, type FileEvents, liveFile } from './file-guards';
import { checkFilename, conflictName, type FilePath, parsePath, pathOf } from './file-paths';
import type { SharedFileEntity } from './shared-file.entity';
import type { SharedFilesRepository } from './shared-files.repository';
import { presentUpload, type SharedFilesService } from './shared-files.service';

export interface WriteOptions {
  baseVersion?: string;
  replace: boolean;
  message?: string;
  /** A branch of the file (branch writes in the `branch` column). */
  branch?: string;
}

/** A sane `type/subtype` from the client, else by nothing: octet-stream (bytes are served with nosniff). */
function contentTypeOf(clientType: string): string {
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(clientType)
    ? clientType.toLowerCase()
    : 'application/octet-stream';
}

/**
 * New versions of files: uploads (one, or a batch each on its own) and reverts. Every write takes
 * the file's row lock first, so the etag an upload is compared with is the one it replaces: two
 * racing uploads with the same `baseVersion` can never both win; the loser is kept whole as a
 * `_conflict_` copy.
 */
export class FileWrites {
  constructor(
    private readonly dataSource: DataSource,
    readonly files: SharedFilesService,
    private readonly events: FileEvents,
  ) {}

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
      // Two first uploads of one new path race to create it: the loser's create breaks the live-path
      // key, and it runs again against the winner's file (a conflict copy, or the same bytes).
      const attempt = () =>
        this.dataSource.transaction(async (manager) => {
          const repo = this.files.repo(access, manager);
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
            await this.files.emitVersion(manager, access, actor, path, created, 'created');
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
          await this.files.emitVersion(manager, access, actor, path, written, 'updated');
          return { kind: 'written' as const, version: written };
        });
      const outcome = await attempt().catch((error: unknown) => {
        if (!isLivePathTaken(error)) throw error;
        keep = false;
        return attempt();
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
      if (!keep) await this.files.blobs.delete(stored.key).catch(() => undefined);
    }
  }

  /** The losing upload as `<stem>_conflict_<username>_<time><.ext>` beside the file, and its conflict row. */
  private async keepConflict(
    repo: SharedFilesRepository,
    actor: CollabUserEntity,
    target: FilePath,
    base: SharedFileEntity,
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
    await new FileConflictsRepository(repo.scope).add(base.id, file.id, actor.id);
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
        await this.files.blobs.delete(stored.key).catch(() => undefined);
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
      const repo = this.files.repo(access, manager);
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
      await this.files.emitVersion(manager, access, actor, pathOf(target), written, 'reverted');
      return presentUpload(target.filename, written);
    });
  }
}

/** The live-path key broken: another upload created the same new path first. */
function isLivePathTaken(error: unknown): boolean {
  const failed = error as { code?: unknown; constraint?: unknown } | null;
  return failed?.code === '23505' && failed.constraint === 'shared_files_live_key';
}
