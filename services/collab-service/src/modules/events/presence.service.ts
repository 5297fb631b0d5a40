import type { Logger } from '@hwp/platform';
import { newId } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabEvents, EventWorkspace } from './events.service';

interface PresenceUser {
  id: string;
  username: string;
}

/** A user's streams of one workspace on this process, and what the database last heard of them. */
interface Entry {
  workspace: EventWorkspace;
  user: PresenceUser;
  /** Open streams now. */
  count: number;
  /** Whether this replica's `collab_presence` row exists (as far as this process knows). */
  row: boolean;
  /** Writes of this entry run one after the other. */
  chain: Promise<void>;
  pending: number;
}

export interface PresenceOptions {
  /** A replica whose rows are older than this is taken for dead (default 60 s). */
  staleMs?: number;
}

/** Who has an open event stream in a workspace (the `online` flag of GET /v1/users). */
export interface PresenceReader {
  onlineUserIds(workspaceId: string): Promise<Set<string>>;
}

/** `presence` event data. */
export interface PresenceData {
  username: string;
  online: boolean;
}

/**
 * Who has an open event stream, across replicas: one `collab_presence` row per workspace, user and
 * replica, refreshed by its replica (`refresh`) and swept once stale (`sweep`, the replica died).
 * A `presence` event goes out when the first stream of a user in a workspace opens on any replica
 * and when the last one closes: each change runs under an advisory lock on (workspace, user), looks
 * at the other replicas' live rows and emits in the same transaction.
 */
export class PresenceService implements PresenceReader {
  readonly replicaId = newId();
  readonly staleMs: number;
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: CollabEvents,
    private readonly logger: Logger,
    options: PresenceOptions = {},
  ) {
    this.staleMs = options.staleMs ?? 60_000;
  }

  /** A stream of `user` opened in `workspace` on this process. */
  opened(workspace: EventWorkspace, user: PresenceUser): void {
    const key = `${workspace.id}:${user.id}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { workspace, user, count: 0, row: false, chain: Promise.resolve(), pending: 0 };
      this.entries.set(key, entry);
    }
    entry.count++;
    if (entry.count === 1) this.sync(key, entry);
  }

  closed(workspace: EventWorkspace, user: PresenceUser): void {
    const key = `${workspace.id}:${user.id}`;
    const entry = this.entries.get(key);
    if (!entry || entry.count === 0) return;
    entry.count--;
    if (entry.count === 0) this.sync(key, entry);
  }

  async onlineUserIds(workspaceId: string): Promise<Set<string>> {
    const rows: { user_id: string }[] = await this.dataSource.query(
      `SELECT DISTINCT user_id FROM collab_presence
       WHERE workspace_id = $1 AND seen_at > now() - $2::float8 * interval '1 millisecond'`,
      [workspaceId, this.staleMs],
    );
    return new Set(rows.map((r) => r.user_id));
  }

  /**
   * Marks this replica's rows as alive and writes their connection counts, in one statement. Rows
   * that vanished (swept while the database was out of reach) and changes that failed to be written
   * are written again; rows this process no longer knows are left to expire.
   */
  async refresh(): Promise<void> {
    const live = [...this.entries.values()].filter((e) => e.pending === 0 && e.row && e.count > 0);
    const rows: { workspace_id: string; user_id: string }[] = live.length
      ? await this.dataSource.query(
          `UPDATE collab_presence p SET seen_at = now(), connections = v.n
           FROM unnest($2::uuid[], $3::uuid[], $4::int[]) AS v(w, u, n)
           WHERE p.replica_id = $1 AND p.workspace_id = v.w AND p.user_id = v.u
           RETURNING p.workspace_id, p.user_id`,
          [
            this.replicaId,
            live.map((e) => e.workspace.id),
            live.map((e) => e.user.id),
            live.map((e) => e.count),
          ],
        )
      : [];
    const alive = new Set(rows.map((r) => `${r.workspace_id}:${r.user_id}`));
    for (const [key, entry] of this.entries) {
      if (entry.pending > 0) continue;
      if (entry.row && entry.count > 0 && !alive.has(key)) entry.row = false;
      if (entry.count > 0 !== entry.row) this.sync(key, entry);
    }
  }

  /** Drops the rows of replicas that stopped refreshing; users left with none go offline. */
  async sweep(): Promise<number> {
    const stale: { workspace_id: string; workspace: string; user_id: string; username: string }[] =
      await this.dataSource.query(
        `SELECT DISTINCT p.workspace_id, w.name AS workspace, p.user_id, u.username
         FROM collab_presence p
         JOIN workspaces w ON w.id = p.workspace_id
         JOIN collab_users u ON u.id = p.user_id
         WHERE p.seen_at <= now() - $1::float8 * interval '1 millisecond'`,
        [this.staleMs],
      );
    let offline = 0;
    for (const row of stale) {
      const workspace = { id: row.workspace_id, name: row.workspace };
      const user = { id: row.user_id, username: row.username };
      await this.dataSource.transaction(async (manager) => {
        await this.lock(manager, workspace.id, user.id);
        // Another replica's sweep may have got there first: only the one that deletes announces.
        const removed: [unknown[], number] = await manager.query(
          `DELETE FROM collab_presence WHERE workspace_id = $1 AND user_id = $2
           AND seen_at <= now() - $3::float8 * interval '1 millisecond'`,
          [workspace.id, user.id, this.staleMs],
        );
        if ((removed[1] ?? 0) > 0 && (await this.othersOnline(manager, workspace.id, user.id, null)) === 0) {
          await this.announce(manager, workspace, user, false);
          offline++;
        }
      });
    }
    return offline;
  }

  private sync(key: string, entry: Entry): void {
    entry.pending++;
    entry.chain = entry.chain
      .then(() => this.write(entry))
      .catch((error: unknown) => {
        // refresh() tries again.
        this.logger.warn(
          { err: error, workspaceId: entry.workspace.id, userId: entry.user.id },
          'presence write failed',
        );
      })
      .finally(() => {
        entry.pending--;
        if (entry.pending === 0 && entry.count === 0 && !entry.row && this.entries.get(key) === entry) {
          this.entries.delete(key);
        }
      });
  }

  /**
   * Writes a change between no stream and some streams; more streams of the same user only change
   * the count, which refresh() writes. Quick open/close pairs collapse into nothing.
   */
  private async write(entry: Entry): Promise<void> {
    const count = entry.count;
    if (count > 0 === entry.row || !this.dataSource.isInitialized) return;
    const { workspace, user } = entry;
    await this.dataSource.transaction(async (manager) => {
      await this.lock(manager, workspace.id, user.id);
      if (count > 0) {
        await manager.query(
          `INSERT INTO collab_presence (workspace_id, user_id, replica_id, connections, seen_at)
           VALUES ($1, $2, $3, $4, now())
           ON CONFLICT (workspace_id, user_id, replica_id)
           DO UPDATE SET connections = EXCLUDED.connections, seen_at = now()`,
          [workspace.id, user.id, this.replicaId, count],
        );
      } else {
        await manager.query(
          'DELETE FROM collab_presence WHERE workspace_id = $1 AND user_id = $2 AND replica_id = $3',
          [workspace.id, user.id, this.replicaId],
        );
      }
      if ((await this.othersOnline(manager, workspace.id, user.id, this.replicaId)) === 0) {
        await this.announce(manager, workspace, user, count > 0);
      }
    });
    entry.row = count > 0;
  }

  /** Serialises presence changes of one user in one workspace across replicas. */
  private async lock(manager: EntityManager, workspaceId: string, userId: string): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `collab-presence:${workspaceId}:${userId}`,
    ]);
  }

  private async othersOnline(
    manager: EntityManager,
    workspaceId: string,
    userId: string,
    replicaId: string | null,
  ): Promise<number> {
    const rows: { n: number }[] = await manager.query(
      `SELECT count(*)::int AS n FROM collab_presence
       WHERE workspace_id = $1 AND user_id = $2 AND replica_id IS DISTINCT FROM $3
         AND seen_at > now() - $4::float8 * interval '1 millisecond'`,
      [workspaceId, userId, replicaId, this.staleMs],
    );
    return rows[0]?.n ?? 0;
  }

  private announce(manager: EntityManager, workspace: EventWorkspace, user: PresenceUser, online: boolean) {
    const data: PresenceData = { username: user.username, online };
    return this.events.emit(manager, workspace, 'presence', data, { actor: user });
  }
}
