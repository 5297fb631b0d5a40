import type { CollabEvent, CollabEventType, EventEnvelope } from '@hwp/contracts';
import { preparedRows } from '@hwp/platform';
import type { EntityManager } from 'typeorm';

/** An event as the log keeps it: the SSE payload plus who may see it. */
export interface LoggedEvent {
  workspaceId: string;
  /** The only recipient (user id), or null for everyone in the workspace. */
  recipientId: string | null;
  event: CollabEvent;
}

interface EventRow {
  workspace_id: string;
  workspace: string;
  id: string;
  type: CollabEventType;
  actor: string;
  path: string | null;
  recipient_id: string | null;
  recipient: string | null;
  data: Record<string, unknown>;
  at: Date;
}

const SELECT_EVENTS = `
  SELECT e.workspace_id, w.name AS workspace, e.id, e.type, e.actor, e.path, e.recipient_id,
         e.recipient, e.data, e.at
  FROM collab_events e JOIN workspaces w ON w.id = e.workspace_id`;

function toLogged(row: EventRow): LoggedEvent {
  const event: CollabEvent = {
    id: Number(row.id),
    type: row.type,
    workspace: row.workspace,
    actor: row.actor,
    at: row.at.toISOString(),
    data: row.data,
  };
  if (row.path !== null) event.path = row.path;
  if (row.recipient !== null) event.to = row.recipient;
  return { workspaceId: row.workspace_id, recipientId: row.recipient_id, event };
}

/**
 * The stored event log (`collab_events`) and the per-workspace counters that number it. Ids come
 * from `collab_event_counters` with `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`: the counter
 * row stays locked until the caller's transaction ends, so ids are gap-free (a rollback takes its
 * id back) and commit in id order (a reader that sees id N also sees every id below it).
 */
export class EventLogRepository {
  /**
   * The common table expressions that number, log and outbox one event for the row of the CTE
   * `source` (a CTE of the caller's statement with at most one row; no row, no event): the next id of
   * the workspace's counter, a log row and the outbox row `Outbox.add` writes, with the event's `id`
   * and `data` (the jsonb expression `dataSql` over `source`) filled into the envelope. Parameters are
   * numbered from `first`. The counter row stays locked until the statement's transaction ends.
   */
  appendCtes(
    source: string,
    dataSql: string,
    first: number,
    logged: LoggedEvent,
    envelope: EventEnvelope,
  ): { ctes: string; params: unknown[] } {
    const { event } = logged;
    const $ = (i: number) => `$${first + i}`;
    return {
      // A change (an event for everyone, not for one user) also moves the workspace's change clock
      // (never backwards) and marks the latest change of its type.
      ctes: `event_counter AS (
         INSERT INTO collab_event_counters (workspace_id, last_id, changed_at)
         SELECT ${$(0)}::uuid, 1, clock_timestamp() FROM ${source}
         ON CONFLICT (workspace_id) DO UPDATE SET last_id = collab_event_counters.last_id + 1,
           changed_at = CASE WHEN ${$(4)}::uuid IS NULL
             THEN GREATEST(clock_timestamp(), collab_event_counters.changed_at)
             ELSE collab_event_counters.changed_at END
         RETURNING last_id, changed_at),
       event_marked AS (
         INSERT INTO collab_event_marks (workspace_id, type, last_id, changed_at)
         SELECT ${$(0)}::uuid, ${$(1)}::text, last_id, changed_at FROM event_counter
         WHERE ${$(4)}::uuid IS NULL
         ON CONFLICT (workspace_id, type) DO UPDATE
           SET last_id = EXCLUDED.last_id, changed_at = EXCLUDED.changed_at),
       event_payload AS (SELECT event_counter.last_id, ${dataSql} AS data FROM event_counter, ${source}),
       event_logged AS (
         INSERT INTO collab_events (workspace_id, id, type, actor, path, recipient_id, recipient, data, at)
         SELECT ${$(0)}::uuid, last_id, ${$(1)}::text, ${$(2)}::text, ${$(3)}::text, ${$(4)}::uuid, ${$(5)}::text,
                data, ${$(6)}::timestamptz
           FROM event_payload),
       event_outboxed AS (
         INSERT INTO outbox (id, type, envelope)
         SELECT ${$(7)}::uuid, ${$(8)}::text,
                jsonb_set(jsonb_set(${$(9)}::jsonb, '{data,event,id}', to_jsonb(last_id)), '{data,event,data}', data)
           FROM event_payload)`,
      params: [
        logged.workspaceId,
        event.type,
        event.actor,
        event.path ?? null,
        logged.recipientId,
        event.to ?? null,
        event.at,
        envelope.id,
        envelope.type,
        JSON.stringify(envelope),
      ],
    };
  }

  /** Numbers, logs and outboxes `logged.event` in one statement (see `appendCtes`); returns its id. */
  async append(manager: EntityManager, logged: LoggedEvent, envelope: EventEnvelope): Promise<number> {
    const { ctes, params } = this.appendCtes('event_source', 'event_source.data', 2, logged, envelope);
    const rows = await preparedRows<{ last_id: string }>(
      manager,
      'collab-events-append',
      `WITH event_source AS (SELECT $1::jsonb AS data), ${ctes} SELECT last_id FROM event_payload`,
      [JSON.stringify(logged.event.data), ...params],
    );
    return Number(rows[0].last_id);
  }

  /**
   * The latest committed change among events of `types` in a workspace: its id (0 when there was
   * none since marks were kept) and the workspace's change clock then (null likewise). One read of
   * the marks' primary key.
   */
  async lastChange(
    manager: EntityManager,
    workspaceId: string,
    types: readonly CollabEventType[],
  ): Promise<{ id: number; at: Date | null }> {
    const [row]: { id: string | null; at: Date | null }[] = await manager.query(
      `SELECT max(last_id) AS id, max(changed_at) AS at FROM collab_event_marks
       WHERE workspace_id = $1 AND type = ANY($2)`,
      [workspaceId, types],
    );
    return { id: Number(row?.id ?? 0), at: row?.at ?? null };
  }

  /** Id of the latest committed event of each workspace (0 when it has none). */
  async lastIds(manager: EntityManager, workspaceIds: string[]): Promise<Map<string, number>> {
    const result = new Map(workspaceIds.map((id) => [id, 0]));
    if (workspaceIds.length === 0) return result;
    const rows: { workspace_id: string; last_id: string }[] = await manager.query(
      'SELECT workspace_id, last_id FROM collab_event_counters WHERE workspace_id = ANY($1)',
      [workspaceIds],
    );
    for (const row of rows) result.set(row.workspace_id, Number(row.last_id));
    return result;
  }

  async lastId(manager: EntityManager, workspaceId: string): Promise<number> {
    return (await this.lastIds(manager, [workspaceId])).get(workspaceId) ?? 0;
  }

  /** Events with `after < id <= upTo`, every recipient, in id order (the gap between two live events). */
  async range(
    manager: EntityManager,
    workspaceId: string,
    after: number,
    upTo: number,
  ): Promise<LoggedEvent[]> {
    const rows: EventRow[] = await manager.query(
      `${SELECT_EVENTS} WHERE e.workspace_id = $1 AND e.id > $2 AND e.id <= $3 ORDER BY e.id`,
      [workspaceId, after, upTo],
    );
    return rows.map(toLogged);
  }

  /** One page of the events after `after` that `userId` may see, in id order (a replay). */
  async pageFor(
    manager: EntityManager,
    workspaceId: string,
    userId: string,
    after: number,
    limit: number,
  ): Promise<LoggedEvent[]> {
    const rows: EventRow[] = await manager.query(
      `${SELECT_EVENTS}
       WHERE e.workspace_id = $1 AND e.id > $2 AND (e.recipient_id IS NULL OR e.recipient_id = $3)
       ORDER BY e.id LIMIT $4`,
      [workspaceId, after, userId, limit],
    );
    return rows.map(toLogged);
  }

  /** Drops events older than the retention; counters stay, so ids never restart. */
  async purgeOlderThan(manager: EntityManager, hours: number): Promise<number> {
    const result: [unknown[], number] = await manager.query(
      `DELETE FROM collab_events WHERE at < now() - $1::float8 * interval '1 hour'`,
      [hours],
    );
    return result[1] ?? 0;
  }
}
