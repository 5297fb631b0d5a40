import { newId, preparedRows, queryRows } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';

export interface FileRow {
  id: string;
  workspace_id: string;
  username: string;
  filename: string;
  current_version_id: string | null;
  branch_of: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  deleted_by: string | null;
  purge_at: Date | null;
}

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

export interface LockRow {
  path: string;
  lock_id: string;
  owner_id: string;
  owner_username: string;
  acquired_at: Date;
  expires_at: Date;
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

/** An ISO-8601 UTC timestamp with milliseconds, as `Date.toISOString` writes it. */
const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** `presentLock` of the lock row `alias` in SQL, as the `lock` event's jsonb data (action `locked`). */
const LOCK_JSON = (alias: string) => `jsonb_build_object(
  'action', 'locked', 'path', ${alias}.path, 'lockId', ${alias}.lock_id, 'owner', ${alias}.owner_username,
  'acquiredAt', to_char(${alias}.acquired_at AT TIME ZONE 'UTC', ${ISO_MS}),
  'expiresAt', to_char(${alias}.expires_at AT TIME ZONE 'UTC', ${ISO_MS}),
  'ttlMs', floor(extract(epoch FROM ${alias}.expires_at) * 1000) - floor(extract(epoch FROM ${alias}.acquired_at) * 1000))`;

/**
 * The shared files of one workspace: every statement carries `workspace_id = <the scope's>` (files,
 * locks, comments, conflicts), and versions are reached through a file found here.
 */
export class SharedFilesRepository {
  constructor(readonly scope: WorkspaceScope) {}

  get manager(): EntityManager {
    return this.scope.manager;
  }

  /** Rows of a statement (TypeORM answers `[rows, count]` for UPDATE and DELETE ... RETURNING). */
  private query<T>(sql: string, params: unknown[]): Promise<T[]> {
    return queryRows<T>(this.manager, sql, params);
  }

  /** The live file, locked until the transaction ends when `lock` (writers of one file queue). */
  async live(username: string, filename: string, lock = false): Promise<FileRow | null> {
    const rows = await this.query<FileRow>(
      `SELECT * FROM shared_files WHERE workspace_id = $1 AND username = $2 AND filename = $3
         AND deleted_at IS NULL ${lock ? 'FOR UPDATE' : ''}`,
      [this.scope.id, username, filename],
    );
    return rows[0] ?? null;
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

  async byId(id: string, lock = false): Promise<FileRow | null> {
    const rows = await this.query<FileRow>(
      `SELECT * FROM shared_files WHERE workspace_id = $1 AND id = $2 ${lock ? 'FOR UPDATE' : ''}`,
      [this.scope.id, id],
    );
    return rows[0] ?? null;
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

  async create(username: string, filename: string, branchOf: string | null = null): Promise<FileRow> {
    const rows = await this.query<FileRow>(
      `INSERT INTO shared_files (id, workspace_id, username, filename, branch_of) VALUES ($1, $2, $3, $4, $5)
       RETURNING *`,
      [newId(), this.scope.id, username, filename, branchOf],
    );
    return rows[0];
  }

  /** Appends a version; on `main` it becomes the file's current one. */
  async addVersion(file: FileRow, version: NewVersion): Promise<VersionRow> {
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
      await this.query('UPDATE shared_files SET current_version_id = $2, updated_at = now() WHERE id = $1', [
        file.id,
        version.id,
      ]);
      file.current_version_id = version.id;
    }
    return (await this.version(file, version.id)) as VersionRow;
  }

  async version(file: FileRow, versionId: string): Promise<VersionRow | null> {
    const rows = await this.query<VersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM shared_file_versions v JOIN collab_users u ON u.id = v.author_id
        WHERE v.file_id = $1 AND v.id = $2`,
      [file.id, versionId],
    );
    return rows[0] ?? null;
  }

  /** The newest version of a branch (`main`: the file's current version). */
  async head(file: FileRow, branch = 'main'): Promise<VersionRow | null> {
    if (branch === 'main')
      return file.current_version_id ? this.version(file, file.current_version_id) : null;
    const rows = await this.query<VersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM shared_file_versions v JOIN collab_users u ON u.id = v.author_id
        WHERE v.file_id = $1 AND v.branch = $2 ORDER BY v.number DESC LIMIT 1`,
      [file.id, branch],
    );
    return rows[0] ?? null;
  }

  /** Every version, newest first, with the message of the comment on the path nearest in time. */
  versions(file: FileRow, path: string): Promise<(VersionRow & { comment: string | null })[]> {
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

  async trash(file: FileRow, actorId: string, retentionDays: number): Promise<FileRow> {
    const rows = await this.query<FileRow>(
      `UPDATE shared_files SET deleted_at = now(), deleted_by = $3, purge_at = now() + make_interval(days => $4)
        WHERE workspace_id = $1 AND id = $2 RETURNING *`,
      [this.scope.id, file.id, actorId, retentionDays],
    );
    return rows[0];
  }

  trashed(username: string): Promise<(FileRow & { size: string; deleted_by_username: string })[]> {
    return this.query(
      `SELECT f.*, v.size, u.username AS deleted_by_username
         FROM shared_files f JOIN shared_file_versions v ON v.id = f.current_version_id
         JOIN collab_users u ON u.id = f.deleted_by
        WHERE f.workspace_id = $1 AND f.username = $2 AND f.deleted_at IS NOT NULL ORDER BY f.deleted_at DESC`,
      [this.scope.id, username],
    );
  }

  async restore(file: FileRow, filename: string): Promise<void> {
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

  // Locks: a lock is valid while expires_at is in the future; expiry needs no job.

  async validLock(path: string): Promise<LockRow | null> {
    const rows = await this.query<LockRow>(
      'SELECT * FROM shared_file_locks WHERE workspace_id = $1 AND path = $2 AND expires_at > now()',
      [this.scope.id, path],
    );
    return rows[0] ?? null;
  }

  /**
   * Takes or refreshes the lock in one statement: it wins when there is no lock, the lock expired, or
   * the caller holds it; of racing callers one wins (a racer waits until the other's statement ends).
   * A loser gets the valid lock as committed when its statement started: null when the winner
   * committed during the statement (then `validLock` reads it). `event` adds the CTEs of the event a win emits (`CollabEvents.within`, source `attempt`, its data
   * `LOCK_JSON`), so a lock is taken and announced in one round trip without a transaction.
   */
  async acquire(
    path: string,
    ownerId: string,
    ownerName: string,
    ttlMs: number,
    event?: (source: { source: string; dataSql: string; first: number }) => {
      ctes: string;
      params: unknown[];
    },
  ): Promise<{ won: LockRow } | { held: LockRow | null }> {
    const params = [this.scope.id, path, newId(), ownerId, ownerName, ttlMs];
    const emitted = event?.({ source: 'attempt', dataSql: LOCK_JSON('attempt'), first: params.length + 1 });
    const rows = await preparedRows<LockRow & { won: boolean }>(
      this.manager,
      emitted ? 'shared-file-locks-acquire-emit' : 'shared-file-locks-acquire',
      `WITH attempt AS (
         INSERT INTO shared_file_locks (workspace_id, path, lock_id, owner_id, owner_username, acquired_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, now(), now() + make_interval(secs => $6::double precision / 1000))
         ON CONFLICT (workspace_id, path) DO UPDATE
           SET lock_id = CASE WHEN shared_file_locks.owner_id = EXCLUDED.owner_id AND shared_file_locks.expires_at > now()
                              THEN shared_file_locks.lock_id ELSE EXCLUDED.lock_id END,
               owner_id = EXCLUDED.owner_id, owner_username = EXCLUDED.owner_username,
               acquired_at = CASE WHEN shared_file_locks.owner_id = EXCLUDED.owner_id AND shared_file_locks.expires_at > now()
                                  THEN shared_file_locks.acquired_at ELSE now() END,
               expires_at = EXCLUDED.expires_at
           WHERE shared_file_locks.expires_at <= now() OR shared_file_locks.owner_id = EXCLUDED.owner_id
         RETURNING *)${emitted ? `, ${emitted.ctes}` : ''}
       SELECT true AS won, * FROM attempt
       UNION ALL
       SELECT false AS won, * FROM shared_file_locks
        WHERE workspace_id = $1 AND path = $2 AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM attempt)`,
      emitted ? [...params, ...emitted.params] : params,
    );
    const [row] = rows;
    if (row?.won) return { won: row };
    return { held: row ?? null };
  }

  async release(path: string): Promise<void> {
    await this.query('DELETE FROM shared_file_locks WHERE workspace_id = $1 AND path = $2', [
      this.scope.id,
      path,
    ]);
  }

  async releaseAll(): Promise<number> {
    const rows = await this.query<{ path: string }>(
      'DELETE FROM shared_file_locks WHERE workspace_id = $1 AND expires_at > now() RETURNING path',
      [this.scope.id],
    );
    return rows.length;
  }
}
