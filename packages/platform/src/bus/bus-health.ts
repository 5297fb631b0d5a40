import type { Bus } from './create-bus';

interface OutboxBacklog {
  waiting: string;
  oldest_ms: number | null;
}

/**
 * The `bus` check of /readyz: null when events flow, otherwise why they do not. Reports an outbox
 * whose oldest unpublished row is older than `degradedAfterMs` (the relay is failing or stalled), a
 * relay loop that has not finished a batch for that long, and consumers the transport sees stalled
 * for that long. Throws only when the database cannot be asked.
 */
export async function busHealth(bus: Bus, degradedAfterMs: number): Promise<string | null> {
  const problems: string[] = [];
  // The partial index on unpublished rows keeps this cheap however large the published history is.
  const [backlog]: OutboxBacklog[] = await bus.dataSource.query(
    `SELECT count(*)::text AS waiting,
            floor(extract(epoch FROM now() - min(created_at)) * 1000)::float8 AS oldest_ms
       FROM outbox WHERE published_at IS NULL`,
  );
  const relay = bus.relay.status();
  if (relay.running && relay.lastBatchAt !== null && Date.now() - relay.lastBatchAt > degradedAfterMs) {
    // Idle, the loop turns every poll interval; this long without a batch means it is stuck.
    problems.push(
      `outbox relay has not finished a batch for ${Math.round((Date.now() - relay.lastBatchAt) / 1000)} s`,
    );
  }
  if (backlog && backlog.oldest_ms !== null && backlog.oldest_ms > degradedAfterMs) {
    const why = !relay.running
      ? 'relay not running'
      : relay.lastError
        ? `relay failing: ${relay.lastError}`
        : 'relay behind';
    problems.push(
      `outbox: ${backlog.waiting} events unpublished, oldest ${Math.round(backlog.oldest_ms / 1000)} s (${why})`,
    );
  }
  problems.push(...(bus.transport.stalledConsumers?.(degradedAfterMs) ?? []));
  return problems.length > 0 ? problems.join('; ') : null;
}
