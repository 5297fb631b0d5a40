import session, { type SessionData } from 'express-session';
import type { DataSource } from 'typeorm';

type Callback<T = void> = (error: unknown, value?: T) => void;

/**
 * express-session store in the service's Postgres (table `collab_sessions`), so every replica
 * sees every session and a restart logs nobody out. Expired rows are refused on read and purged
 * in the background. Uses the data source's pool, one statement per call, never inside a
 * transaction.
 */
export class PostgresSessionStore extends session.Store {
  private lastPurge = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly defaultTtlMs: number,
  ) {
    super();
  }

  private expiry(sess: SessionData): Date {
    const expires = sess.cookie?.expires;
    return expires ? new Date(expires) : new Date(Date.now() + this.defaultTtlMs);
  }

  private purgeSometimes(): void {
    const now = Date.now();
    if (now - this.lastPurge < 60_000) return;
    this.lastPurge = now;
    this.dataSource.query('DELETE FROM collab_sessions WHERE expires_at <= now()').catch(() => undefined);
  }

  override get(sid: string, callback: Callback<SessionData | null>): void {
    this.dataSource
      .query('SELECT sess FROM collab_sessions WHERE sid = $1 AND expires_at > now()', [sid])
      .then((rows: { sess: SessionData }[]) => callback(null, rows[0]?.sess ?? null), callback);
  }

  override set(sid: string, sess: SessionData, callback?: Callback): void {
    this.purgeSometimes();
    this.dataSource
      .query(
        `INSERT INTO collab_sessions (sid, sess, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (sid) DO UPDATE SET sess = EXCLUDED.sess, expires_at = EXCLUDED.expires_at`,
        [sid, JSON.stringify(sess), this.expiry(sess)],
      )
      .then(
        () => callback?.(null),
        (error: unknown) => callback?.(error),
      );
  }

  override touch(sid: string, sess: SessionData, callback?: Callback): void {
    this.dataSource
      .query('UPDATE collab_sessions SET expires_at = $2 WHERE sid = $1', [sid, this.expiry(sess)])
      .then(
        () => callback?.(null),
        (error: unknown) => callback?.(error),
      );
  }

  override destroy(sid: string, callback?: Callback): void {
    this.dataSource.query('DELETE FROM collab_sessions WHERE sid = $1', [sid]).then(
      () => callback?.(null),
      (error: unknown) => callback?.(error),
    );
  }

  /** Ends every session of a user (logout everywhere). */
  async destroyForUser(userId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM collab_sessions WHERE sess->>'userId' = $1`, [userId]);
  }
}
