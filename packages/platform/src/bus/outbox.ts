import type { EventEnvelope } from '@hwp/contracts';
import type { EntityManager } from 'typeorm';
import type { OutgoingEvent } from './bus';
import { buildEnvelope } from './envelope';

/**
 * Writes events to the `outbox` table. The caller passes the manager of its own transaction so the
 * event is committed (or rolled back) together with the business change; nothing reaches the broker
 * until the relay picks the row up after commit.
 */
export class Outbox {
  async add<TData>(manager: EntityManager, event: OutgoingEvent<TData>): Promise<EventEnvelope<TData>> {
    const envelope = buildEnvelope(event);
    // Always through the caller's manager: the row must commit or roll back with the change.
    await manager.query('INSERT INTO outbox (id, type, envelope) VALUES ($1, $2, $3::jsonb)', [
      envelope.id,
      envelope.type,
      JSON.stringify(envelope),
    ]);
    return envelope;
  }
}
