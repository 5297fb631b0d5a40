import { entityRows, newId, preparedRows, queryRows } from '@hwp/platform';
import { type EntityManager, IsNull } from 'typeorm';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { FileLocksRepository } from './file-locks.repository';
import { SharedFileEntity } from './shared-file.entity';

export interface VersionRow {
  id: string;
  file_id: string;
  number: number;
  branch: string;
  blob_key: string;
  sha256: string;
  size: string;
  content_type: string;
  message: string | null;
  author_id: string;
  author_username: string;
  source: string;
  created_at: Date;
}

/** A file as listed: its name and current version. */
export interface ListedFile {
  username: string;
  filename: string;
  branch_of: string | null;
  version_id: string;
  sha256: string;
  size: string;
  content_type: string;
  created_at: Date;
  author_username: string;
}

export interface NewVersion {
  id: string;
  blobKey: string;
  sha256: string;
  size: number;
  contentType: string;
  message: string | null;
  authorId: string;
  source: 'upload' | 'revert' | 'merge' | 'resolve' | 'branch' | 'conflict';
  branch?: string;
}

const VERSION_COLUMNS = `v.id, v.file_id, v.number, v.branch, v.blob_key, v.sha256, v.size, v.content_type, v.message,
  v.author_id, u.username AS author_username, v.source, v.created_at`;

/**
 * The shared files of one workspace and their versions. One file (live by name, or by id, with its
 * row lock when asked) is read through the scope's repository; the other statements stay SQL (joins
 * with the versions and their authors, `RETURNING *`, the purge's CTE, the prepared served head) and
 * each carries `workspace_id = <the scope's>`. Versions are reached through a file found here.
 * `locks` are the workspace's locks on the same manager (every write checks them).
 */
export class SharedFilesRepository {
  readonly locks: FileLocksRepository;
  private readonly files: WorkspaceScopedRepository<SharedFileEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.locks = new FileLocksRepository(scope);
    this.files = scope.repo(SharedFileEntity);
  }

  get manager(): EntityManager {
    return this.scope.manager;
  }

  /** Rows of a statement (TypeORM answers `[rows, count]` for UPDATE and DELETE ... RETURNING). */
  private query<T>(sql: string, params: unknown[]): Promise<T[]> {
    return queryRows<T>(this.manager, sql, params);
  }

  /** A `RETURNING *` (or `SELECT f.*`) row of shared_files as the entity. */
  private get fromRow() {
    return entityRows(this.manager.connection, SharedFileEntity);
  }

  /** The live file, locked until the transaction ends when `lock` (writers of one file queue). */
  live(username: string, filename: string, lock = false): Promise<SharedFileEntity | null> {
    return this.files.findOne({ username, filename, deletedAt: IsNull() }, { lock });
  }

  /** A live file's current version in one statement (what serving needs), or null. */
  async liveHead(username: string, filename: string): Promise<VersionRow | null> {
    // Every served read runs this: prepared once per connection.
    const rows = await preparedRows<VersionRow>(
      this.manager,
      'shared-files-live-head',
      `SELECT ${VERSION_COLUMNS} FROM shared_files f
         JOIN shared_file_versions v ON v.id = f.current_version_id JOIN collab_users u ON u.id = v.author_id
        WHERE f.workspace_id = $1 AND f.username = $2 AND f.filename = $3 AND f.deleted_at IS NULL`,
      [this.scope.id, username, filename],
    );
    return rows[0] ?? null;
  }

  /** A file of the workspace, live or trashed; locked until the transaction ends when `lock`. */
  byId(id: string, lock = false): Promise<SharedFileEntity | null> {
    return this.files.findOne({ id }, { lock });
  }

  /** Live files of one folder (or all folders), by name, with their current version. */
  list(username?: string): Promise<ListedFile[]> {
    return this.query(
      `SELECT f.username, f.filename, f.branch_of, v.id AS version_id, v.sha256, v.size, v.content_type,
              v.created_at, u.username AS author_username
         FROM shared_files f JOIN shared_file_versions v ON v.id = f.current_version_id
         JOIN collab_users u ON u.id = v.author_id
        WHERE f.workspace_id = $1 AND f.deleted_at IS NULL AND ($2::text IS NULL OR f.username = $2)
        ORDER BY f.username, f.filename`,
      [this.scope.id, username ?? null],
    );
  }

  async create(
    username: string,
    filename: string,
    branchOf: string | null = null,
  ): Promise<SharedFileEntity> {
    const rows = await this.query<Record<string, unknown>>(
      `INSERT INTO shared_files (id, workspace_id, username, filename, branch_of) VALUES ($1, $2, $3, $4, $5)
       RETURNING *`,
      [newId(), this.scope.id, username, filename, branchOf],
    );
    return this.fromRow(rows[0]);
  }

  /** Appends a version; on `main` it becomes the file's current one. */
  async addVersion(file: SharedFileEntity, version: NewVersion): Promise<VersionRow> {
    const branch = version.branch ?? 'main';
    await this.query(
      `INSERT INTO shared_file_versions (id, file_id, number, branch, blob_key, sha256, size, content_type, message,
         author_id, source)
       VALUES ($1, $2, (SELECT coalesce(max(number), 0) + 1 FROM shared_file_versions WHERE file_id = $2), $3, $4,
         $5, $6, $7, $8, $9, $10)`,
      [
        version.id,
        file.id,
        branch,
        version.blobKey,
        version.sha256,
        version.size,
        version.contentType,
        version.message,
        version.authorId,
        version.source,
      ],
    );
    if (branch === 'main') {
      await this.query(
        'UPDATE shared_files SET current_version_id = $3, updated_at = now() WHERE workspace_id = $1 AND id = $2',
        [this.scope.id, file.id, version.id],
      );
      file.currentVersionId = version.id;
    }
    return (await this.version(file, version.id)) as VersionRow;
  }

  async version(file: SharedFileEntity, versionId: string): Promise<VersionRow | null> {
    const rows = await this.query<VersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM shared_file_versions v JOIN collab_users u ON u.id = v.author_id
        WHERE v.file_id = $1 AND v.id = $2`,
      [file.id, versionId],
    );
    return rows[0] ?? null;
  }

  /** The newest version of a branch (`main`: the file's current version). */
  async head(file: SharedFileEntity, branch = 'main'): Promise<VersionRow | null> {
    if (branch === 'main') return file.currentVersionId ? this.version(file, file.currentVersionId) : null;
    const rows = await this.query<VersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM shared_file_versions v JOIN collab_users u ON u.id = v.author_id
        WHERE v.file_id = $1 AND v.branch = $2 ORDER BY v.number DESC LIMIT 1`,
      [file.id, branch],
    );
    return rows[0] ?? null;
  }

  /** Every version, newest first, with the message of the comment on the path nearest in time. */
  versions(file: SharedFileEntity, path: string): Promise<(VersionRow & { comment: string | null })[]> {
    return this.query(
      `SELECT ${VERSION_COLUMNS}, (
          SELECT c.body FROM shared_file_comments c
           WHERE c.workspace_id = $2 AND c.path = $3
           ORDER BY abs(extract(epoch FROM c.created_at - v.created_at)), c.created_at LIMIT 1
        ) AS comment
         FROM shared_file_versions v JOIN collab_users u ON u.id = v.author_id
        WHERE v.file_id = $1 ORDER BY v.number DESC`,
      [file.id, this.scope.id, path],
    );
  }

  async trash(file: SharedFileEntity, actorId: string, retentionDays: number): Promise<SharedFileEntity> {
    const rows = await this.query<Record<string, unknown>>(
      `UPDATE shared_files SET deleted_at = now(), deleted_by = $3, purge_at = now() + make_interval(days => $4)
        WHERE workspace_id = $1 AND id = $2 RETURNING *`,
      [this.scope.id, file.id, actorId, retentionDays],
    );
    return this.fromRow(rows[0]);
  }

  /** A folder's trash, newest first, with each file's size and who deleted it. */
  async trashed(username: string): Promise<{ file: SharedFileEntity; size: string; deletedBy: string }[]> {
    const rows = await this.query<Record<string, unknown>>(
      `SELECT f.*, v.size, u.username AS deleted_by_username
         FROM shared_files f JOIN shared_file_versions v ON v.id = f.current_version_id
         JOIN collab_users u ON u.id = f.deleted_by
        WHERE f.workspace_id = $1 AND f.username = $2 AND f.deleted_at IS NOT NULL ORDER BY f.deleted_at DESC`,
      [this.scope.id, username],
    );
    return rows.map((row) => ({
      file: this.fromRow(row),
      size: row.size as string,
      deletedBy: row.deleted_by_username as string,
    }));
  }

  async restore(file: SharedFileEntity, filename: string): Promise<void> {
    await this.query(
      `UPDATE shared_files SET deleted_at = NULL, deleted_by = NULL, purge_at = NULL, filename = $3, updated_at = now()
        WHERE workspace_id = $1 AND id = $2`,
      [this.scope.id, file.id, filename],
    );
  }

  /** Trashed files past their retention, with their versions' blob keys, removed for good. */
  async purgeExpired(): Promise<string[]> {
    const rows = await this.query<{ blob_key: string }>(
      `WITH gone AS (
         DELETE FROM shared_files WHERE workspace_id = $1 AND deleted_at IS NOT NULL AND purge_at <= now()
         RETURNING id
       )
       SELECT v.blob_key FROM shared_file_versions v WHERE v.file_id IN (SELECT id FROM gone)`,
      [this.scope.id],
    );
    return rows.map((r) => r.blob_key);
  }
}
