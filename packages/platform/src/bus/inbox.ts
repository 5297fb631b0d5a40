import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource, EntityManager } from 'typeorm';
import { runWithContext } from '../context';
import { parentContext, traced, traceparentOf } from '../tracing';
import { type EventHandler, type MessageTransport, queueNameOf, type SubscribeOptions } from './bus';
import { type BusLogger, silentLogger } from './logger';

/**
 * Records `eventId` for `consumer` inside the caller's transaction. Returns false when it was already
 * recorded, i.e. the event is a redelivery that must be skipped.
 */
export async function claimInboxEntry(
  manager: EntityManager,
  consumer: string,
  eventId: string,
): Promise<boolean> {
  const inserted: unknown[] = await manager.query(
    'INSERT INTO inbox (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING event_id',
    [consumer, eventId],
  );
  return inserted.length > 0;
}

/**
 * Wraps a handler so each delivery runs in one transaction together with its inbox row: a duplicate
 * is skipped, and a failing handler rolls the inbox row back so the redelivery runs it again. The
 * inbox key is the queue name `<serviceName>.<consumer>`, unique even when services share a database.
 */
export function inboxHandler(
  dataSource: DataSource,
  inboxKey: string,
  handler: EventHandler,
  logger: BusLogger = silentLogger,
): (envelope: EventEnvelope) => Promise<void> {
  return async (envelope) => {
    await dataSource.transaction(async (manager) => {
      if (!(await claimInboxEntry(manager, inboxKey, envelope.id))) {
        logger.debug(
          { consumer: inboxKey, eventId: envelope.id, type: envelope.type },
          'duplicate event skipped',
        );
        return;
      }
      await handler(envelope, manager);
    });
  };
}

/**
 * Subscribes `handler` on `transport`, with inbox deduplication in `dataSource`. A broadcast
 * subscription skips the inbox (every replica handles every message, see SubscribeOptions.broadcast):
 * its handler gets the data source's manager, outside a transaction.
 */
export function subscribeWithInbox(
  transport: MessageTransport,
  dataSource: DataSource,
  options: SubscribeOptions,
  handler: EventHandler,
  logger: BusLogger = silentLogger,
): Promise<void> {
  const consume = options.broadcast
    ? (envelope: EventEnvelope) => handler(envelope, dataSource.manager)
    : inboxHandler(dataSource, queueNameOf(transport.serviceName, options.consumer), handler, logger);
  return transport.subscribe(options, (envelope) =>
    inTrace(options.consumer, envelope, () => consume(envelope)),
  );
}

/**
 * Runs a consumer's handling of `envelope` in the context of the work that sent it: its correlation
 * id as the request id (logs), and its trace continued by a consumer span (or passed on as it came),
 * so events the handler writes carry the trace further.
 */
function inTrace(consumer: string, envelope: EventEnvelope, work: () => Promise<void>): Promise<void> {
  const requestId = envelope.correlationId ?? envelope.id;
  const parent = parentContext(envelope.traceparent);
  return traced(
    `process ${envelope.type}`,
    'consumer',
    parent,
    { 'messaging.consumer.group.name': consumer, 'messaging.message.id': envelope.id },
    (span) =>
      runWithContext({ requestId, traceparent: span ? traceparentOf(span) : envelope.traceparent }, work),
  );
}
