import type { DeleteResult, FileMeta, TrashList } from '@hwp/contracts';
import { ConflictError, NotFoundError } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { assertCanWrite, assertUnlocked, type FileEvents, liveFile } from './file-guards';
import { checkFilename, type FilePath, pathOf } from './file-paths';
import type { SharedFilesService } from './shared-files.service';

/**
 * The trash: files deleted softly (every version kept), restored with every version, and removed
 * for good with their blobs once past the retention.
 */
export class FileTrash {
  constructor(
    private readonly dataSource: DataSource,
    private readonly files: SharedFilesService,
    private readonly events: FileEvents,
  ) {}

  /** Soft delete into the trash (respects locks). */
  async remove(actor: CollabUserEntity, access: WorkspaceScope, target: FilePath): Promise<DeleteResult> {
    return this.dataSource.transaction(async (manager) => {
      const repo = this.files.repo(access, manager);
      assertCanWrite(access, actor, target.username);
      await assertUnlocked(repo, pathOf(target), actor);
      const file = await liveFile(repo, target, true);
      const trashed = await repo.trash(file, actor.id, this.files.trashRetentionDays);
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
      return { key: file.id, purgeAt: (trashed.purgeAt as Date).toISOString() };
    });
  }

  /** A folder's trash, after purging what is past its retention (their blobs too). */
  async trash(access: WorkspaceScope, username: string): Promise<TrashList> {
    await this.purge(access);
    const rows = await this.files.repo(access).trashed(username);
    return {
      items: rows.map(({ file, size, deletedBy }) => ({
        key: file.id,
        workspace: access.name,
        username: file.username,
        filename: file.filename,
        size: Number(size),
        deletedAt: (file.deletedAt as Date).toISOString(),
        deletedBy,
        purgeAt: (file.purgeAt as Date).toISOString(),
      })),
    };
  }

  async purge(access: WorkspaceScope): Promise<void> {
    const keys = await this.dataSource.transaction((manager) =>
      this.files.repo(access, manager).purgeExpired(),
    );
    for (const key of keys) await this.files.blobs.delete(key).catch(() => undefined);
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
      const repo = this.files.repo(access, manager);
      assertCanWrite(access, actor, username);
      const file = await repo.byId(key, true);
      if (!file?.deletedAt || file.username !== username)
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
    return this.files.meta(access, restored);
  }
}
