import { newId, preparedRows, queryRows } from '@hwp/platform';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { SharedFileLockEntity } from './shared-file.entity';

/** A lock as its statements return it (`SELECT *` of shared_file_locks). */
export interface LockRow {
  path: string;
  lock_id: string;
  owner_id: string;
  owner_username: string;
  acquired_at: Date;
  expires_at: Date;
}

/** An ISO-8601 UTC timestamp with milliseconds, as `Date.toISOString` writes it. */
const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** `presentLock` of the lock row `alias` in SQL, as the `lock` event's jsonb data (action `locked`). */
const LOCK_JSON = (alias: string) => `jsonb_build_object(
  'action', 'locked', 'path', ${alias}.path, 'lockId', ${alias}.lock_id, 'owner', ${alias}.owner_username,
  'acquiredAt', to_char(${alias}.acquired_at AT TIME ZONE 'UTC', ${ISO_MS}),
  'expiresAt', to_char(${alias}.expires_at AT TIME ZONE 'UTC', ${ISO_MS}),
  'ttlMs', floor(extract(epoch FROM ${alias}.expires_at) * 1000) - floor(extract(epoch FROM ${alias}.acquired_at) * 1000))`;

/**
 * The locks of one workspace: a lock is valid while `expires_at` is in the future (by the database's
 * clock), so expiry needs no job. Taking a lock stays one SQL statement (an upsert that decides the
 * race, optionally with the CTEs of its event); its workspace is the scope's.
 */
export class FileLocksRepository {
  private readonly locks: WorkspaceScopedRepository<SharedFileLockEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.locks = scope.repo(SharedFileLockEntity);
  }

  private get manager() {
    return this.scope.manager;
  }

  /** Rows of a statement (TypeORM answers `[rows, count]` for DELETE ... RETURNING). */
  private query<T>(sql: string, params: unknown[]): Promise<T[]> {
    return queryRows<T>(this.manager, sql, params);
  }

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
    await this.locks.delete({ path });
  }

  async releaseAll(): Promise<number> {
    const rows = await this.query<{ path: string }>(
      'DELETE FROM shared_file_locks WHERE workspace_id = $1 AND expires_at > now() RETURNING path',
      [this.scope.id],
    );
    return rows.length;
  }
}
