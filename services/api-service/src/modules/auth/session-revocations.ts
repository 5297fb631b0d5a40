import { type RevokedSessionList, RoutingKeys, type SessionRevokedData } from '@hwp/contracts';
import type { Outbox } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';

export type RevocationReason = SessionRevokedData['reason'];

/**
 * What other services need to refuse access tokens of ended sessions before their `exp`: a row per
 * ended session (kept until its last token has expired) and a `session.revoked.v1` event, both in the
 * transaction that ended the sessions.
 */
export class SessionRevocations {
  constructor(
    private readonly outbox: Outbox,
    private readonly tokenTtlSeconds: number,
  ) {}

  async record(
    manager: EntityManager,
    userId: string,
    sessionIds: string[],
    reason: RevocationReason,
  ): Promise<void> {
    if (sessionIds.length === 0) return;
    const expiresAt = new Date(Date.now() + this.tokenTtlSeconds * 1000);
    // Rows whose tokens have all expired go here, on a signed-in write, not on the public read.
    await manager.query('DELETE FROM revoked_sessions WHERE expires_at < now()');
    await manager.query(
      `INSERT INTO revoked_sessions (session_id, user_id, reason, expires_at)
       SELECT id, $2, $3, $4 FROM unnest($1::uuid[]) AS id
       ON CONFLICT (session_id) DO NOTHING`,
      [sessionIds, userId, reason, expiresAt],
    );
    const data: SessionRevokedData = {
      session_ids: sessionIds,
      user_id: userId,
      exp: Math.ceil(expiresAt.getTime() / 1000),
      reason,
    };
    await this.outbox.add(manager, { type: RoutingKeys.sessionRevoked, actor: userId, data });
  }

  /** The ended sessions whose tokens may still be unexpired (a read only: the rows past that are dropped by `record`). */
  async list(dataSource: DataSource): Promise<RevokedSessionList> {
    const rows: { session_id: string; expires_at: Date; now: Date }[] = await dataSource.query(
      'SELECT session_id, expires_at, now() AS now FROM revoked_sessions WHERE expires_at >= now() ORDER BY expires_at',
    );
    const [{ now }] = rows.length
      ? rows
      : ((await dataSource.query('SELECT now() AS now')) as { now: Date }[]);
    return {
      items: rows.map((r) => ({ session_id: r.session_id, expires_at: r.expires_at.toISOString() })),
      as_of: now.toISOString(),
    };
  }
}
