import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource, EntityManager } from 'typeorm';
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
  if (options.broadcast) {
    return transport.subscribe(options, (envelope) => handler(envelope, dataSource.manager));
  }
  const inboxKey = queueNameOf(transport.serviceName, options.consumer);
  return transport.subscribe(options, inboxHandler(dataSource, inboxKey, handler, logger));
}
