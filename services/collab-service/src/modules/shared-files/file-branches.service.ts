import type {
  FileBranch,
  FileBranchList,
  FileConflictList,
  ResolveResult,
  UploadResult,
} from '@hwp/contracts';
import { AppError, ConflictError, NotFoundError, newId, ValidationError } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { type BranchRow, FileBranchesRepository } from './file-branches.repository';
import { FileConflictsRepository } from './file-conflicts.repository';
import { assertCanWrite, assertUnlocked, type FileEvents, liveFile } from './file-guards';
import { branchFilename, checkFilename, type FilePath, parsePath, pathOf } from './file-paths';
import type { SharedFileEntity } from './shared-file.entity';
import { SharedFilesRepository } from './shared-files.repository';
import { presentUpload, type SharedFilesService } from './shared-files.service';

/**
 * Branches of a file and merges into main (DECISIONS.md 6), and conflicts. With
 * `BRANCH_SUFFIX_WRITES` (phase 1) a branch is its own file `<stem>@<branch><.ext>`; without it
 * (phase 2) a branch is a line of versions of the base file (`branch` column). A merge makes the
 * branch head the new main version; if main moved since the branch point it is 409 unless forced.
 */
export class FileBranchesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly files: SharedFilesService,
    private readonly events: FileEvents,
    private readonly suffixWrites: boolean,
  ) {}

  private branches(repo: SharedFilesRepository, username: string, base: string): Promise<BranchRow[]> {
    return new FileBranchesRepository(repo.scope).of(username, base);
  }

  private async present(
    repo: SharedFilesRepository,
    base: SharedFileEntity,
    row: BranchRow,
  ): Promise<FileBranch> {
    const file = row.suffix_file ? await repo.byId(row.file_id) : base;
    const head = file ? await repo.head(file, row.suffix_file ? 'main' : row.name) : null;
    return {
      branch: row.name,
      name: row.name,
      workspace: repo.scope.name,
      username: base.username,
      base: row.base,
      filename: file?.filename ?? row.base,
      headVersionId: head?.id ?? null,
      baseVersionId: row.base_version_id,
      createdBy: row.created_by_username,
      createdAt: row.created_at.toISOString(),
    };
  }

  /** `main` (the base file) first, then its branches. */
  async list(access: WorkspaceScope, target: FilePath): Promise<FileBranchList> {
    const repo = new SharedFilesRepository(access.in(this.dataSource.manager));
    const base = await liveFile(repo, target);
    const main = await repo.head(base);
    const items: FileBranch[] = [
      {
        branch: 'main',
        name: 'main',
        workspace: repo.scope.name,
        username: base.username,
        base: base.filename,
        filename: base.filename,
        headVersionId: main?.id ?? null,
        baseVersionId: null,
        createdBy: main?.author_username ?? '',
        createdAt: base.createdAt.toISOString(),
      },
    ];
    for (const row of await this.branches(repo, base.username, base.filename))
      items.push(await this.present(repo, base, row));
    return { items };
  }

  async create(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    target: FilePath,
    name: string,
  ): Promise<FileBranch> {
    if (name === 'main')
      throw new ValidationError('main exists already: it is the file itself', [
        { field: 'branch', message: 'reserved' },
      ]);
    return this.dataSource.transaction(async (manager) => {
      const repo = new SharedFilesRepository(access.in(manager));
      assertCanWrite(access, actor, target.username);
      const base = await liveFile(repo, target, true);
      if (base.branchOf)
        throw new ValidationError('Branch from the main file, not from a branch', [
          { field: 'base', message: 'is a branch file' },
        ]);
      const main = await repo.head(base);
      if (!main) throw new NotFoundError(`${pathOf(target)} has no version`);
      const exists = (await this.branches(repo, base.username, base.filename)).some((b) => b.name === name);
      if (exists) throw new ConflictError(`${pathOf(target)} has a branch ${name}`, { field: 'branch' });
      let file = base;
      if (this.suffixWrites) {
        const filename = checkFilename(branchFilename(base.filename, name), 'branch');
        const path = pathOf({ ...target, filename });
        await assertUnlocked(repo, path, actor);
        if (await repo.live(base.username, filename))
          throw new ConflictError(`A file named ${filename} exists`, { field: 'branch' });
        file = await repo.create(base.username, filename, base.filename);
        const copy = await this.files.copyBytes(main, { ...target, filename });
        await repo.addVersion(file, {
          id: copy.id,
          blobKey: copy.key,
          sha256: main.sha256,
          size: Number(main.size),
          contentType: main.content_type,
          message: `Branch ${name} of ${base.filename}`,
          authorId: actor.id,
          source: 'branch',
        });
      } else {
        await repo.addVersion(base, {
          id: newId(),
          blobKey: main.blob_key,
          sha256: main.sha256,
          size: Number(main.size),
          contentType: main.content_type,
          message: `Branch ${name}`,
          authorId: actor.id,
          source: 'branch',
          branch: name,
        });
      }
      const row = await new FileBranchesRepository(repo.scope).add({
        username: base.username,
        base: base.filename,
        name,
        fileId: file.id,
        suffixFile: this.suffixWrites,
        baseVersionId: main.id,
        createdBy: actor,
      });
      await this.events.emit(
        manager,
        access.ref,
        'update',
        { action: 'branch.created', path: pathOf(target), branch: name },
        { actor, path: pathOf(target) },
      );
      return this.present(repo, base, row);
    });
  }

  async remove(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    target: FilePath,
    name: string,
  ): Promise<FileBranchList> {
    if (name === 'main')
      throw new AppError('validation_failed', 'main cannot be deleted', {
        errors: [{ field: 'branch', message: 'main cannot be deleted' }],
      });
    await this.dataSource.transaction(async (manager) => {
      const repo = new SharedFilesRepository(access.in(manager));
      assertCanWrite(access, actor, target.username);
      const base = await liveFile(repo, target, true);
      const row = (await this.branches(repo, base.username, base.filename)).find((b) => b.name === name);
      if (!row) throw new NotFoundError(`${pathOf(target)} has no branch ${name}`);
      if (row.suffix_file) {
        const file = await repo.byId(row.file_id, true);
        if (file && !file.deletedAt) {
          await assertUnlocked(repo, pathOf({ ...target, filename: file.filename }), actor);
          await repo.trash(file, actor.id, this.files.trashRetentionDays);
        }
      }
      await new FileBranchesRepository(repo.scope).markDeleted(row);
      await this.events.emit(
        manager,
        access.ref,
        'update',
        { action: 'branch.deleted', path: pathOf(target), branch: name },
        { actor, path: pathOf(target) },
      );
    });
    return this.list(access, target);
  }

  /** The branch head as a new main version (respects locks on the main file). */
  async merge(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    target: FilePath,
    name: string,
    options: { message?: string; force?: boolean },
  ): Promise<UploadResult> {
    return this.dataSource.transaction(async (manager) => {
      const repo = new SharedFilesRepository(access.in(manager));
      assertCanWrite(access, actor, target.username);
      await assertUnlocked(repo, pathOf(target), actor);
      const base = await liveFile(repo, target, true);
      const row = (await this.branches(repo, base.username, base.filename)).find((b) => b.name === name);
      if (!row) throw new NotFoundError(`${pathOf(target)} has no branch ${name}`);
      const file = row.suffix_file ? await repo.byId(row.file_id) : base;
      const head =
        file && !file.deletedAt ? await repo.head(file, row.suffix_file ? 'main' : row.name) : null;
      if (!head) throw new NotFoundError(`The branch ${name} has no version`);
      if (base.currentVersionId !== row.base_version_id && !options.force) {
        throw new ConflictError(
          `main of ${pathOf(target)} moved since the branch ${name} was made or last merged; merge with force: true to overwrite it`,
          { field: 'fromBranch' },
        );
      }
      const bytes = row.suffix_file
        ? await this.files.copyBytes(head, target)
        : { id: newId(), key: head.blob_key };
      const written = await repo.addVersion(base, {
        id: bytes.id,
        blobKey: bytes.key,
        sha256: head.sha256,
        size: Number(head.size),
        contentType: head.content_type,
        message: options.message?.trim() || `Merged ${name}`,
        authorId: actor.id,
        source: 'merge',
      });
      await new FileBranchesRepository(repo.scope).setBaseVersion(row, written.id);
      await this.files.emitVersion(manager, access, actor, pathOf(target), written, 'merged');
      return presentUpload(base.filename, written);
    });
  }

  async conflicts(access: WorkspaceScope, username: string): Promise<FileConflictList> {
    const rows = await new FileConflictsRepository(access.in(this.dataSource.manager)).open(username);
    return {
      items: rows.map((r) => ({
        id: r.id,
        baseName: `${access.name}/${username}/${r.base}`,
        conflictPath: `${access.name}/${username}/${r.copy}`,
        author: r.author,
        etag: r.sha256,
        createdAt: r.created_at.toISOString(),
      })),
    };
  }

  /**
   * One version for everyone: the accepted path (the file itself or one of its conflict copies)
   * becomes the file's current version; every conflict copy of the file goes to the trash.
   */
  async resolve(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    baseName: string,
    acceptedPath: string,
    message?: string,
  ): Promise<ResolveResult> {
    const target = parsePath(baseName, 'baseName');
    const accepted = parsePath(acceptedPath, 'acceptedPath');
    if (accepted.workspace !== target.workspace || accepted.username !== target.username) {
      throw new ValidationError('acceptedPath must be the file or one of its conflict copies', [
        { field: 'acceptedPath', message: 'not of this file' },
      ]);
    }
    return this.dataSource.transaction(async (manager) => {
      const repo = new SharedFilesRepository(access.in(manager));
      assertCanWrite(access, actor, target.username);
      await assertUnlocked(repo, pathOf(target), actor);
      const base = await liveFile(repo, target, true);
      const conflicts = new FileConflictsRepository(repo.scope);
      const copies = await conflicts.lockOpenOf(base.id);
      let current = await repo.head(base);
      if (accepted.filename !== target.filename) {
        const chosen = copies.find((c) => c.filename === accepted.filename);
        if (!chosen) throw new NotFoundError(`${acceptedPath} is not an open conflict copy of ${baseName}`);
        const file = (await repo.byId(chosen.conflict_file_id)) as SharedFileEntity;
        const head = await repo.head(file);
        if (!head) throw new NotFoundError(`${acceptedPath} has no version`);
        const bytes = await this.files.copyBytes(head, target);
        current = await repo.addVersion(base, {
          id: bytes.id,
          blobKey: bytes.key,
          sha256: head.sha256,
          size: Number(head.size),
          contentType: head.content_type,
          message: message?.trim() || `Resolved with ${accepted.filename}`,
          authorId: actor.id,
          source: 'resolve',
        });
        await this.files.emitVersion(manager, access, actor, pathOf(target), current, 'resolved');
      }
      for (const copy of copies) {
        const file = await repo.byId(copy.conflict_file_id, true);
        if (file && !file.deletedAt) await repo.trash(file, actor.id, this.files.trashRetentionDays);
      }
      await conflicts.resolveAll(base.id, actor.id);
      if (!current) throw new NotFoundError(`${baseName} has no version`);
      await this.events.emit(
        manager,
        access.ref,
        'conflict',
        {
          action: 'resolved',
          path: pathOf(target),
          acceptedPath: pathOf(accepted),
          versionId: current.id,
          removed: copies.length,
        },
        { actor, path: pathOf(target) },
      );
      return { path: pathOf(target), versionId: current.id, etag: current.sha256, removed: copies.length };
    });
  }
}
