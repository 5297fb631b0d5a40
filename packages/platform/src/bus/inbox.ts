import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource, EntityManager } from 'typeorm';
import { runWithContext } from '../context';
import { isDatabaseUnavailable } from '../db/unavailable';
import { parentContext, traced, traceparentOf } from '../tracing';
import { type EventHandler, type MessageTransport, queueNameOf, type SubscribeOptions } from './bus';
import { type BusLogger, describeError, silentLogger } from './logger';

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

/** Runs work when a slot is free (the bus's bound on transactions its handlers hold at once). */
export type Gate = <T>(work: () => Promise<T>) => Promise<T>;
const open: Gate = (work) => work();

/**
 * How long a delivery waits for a database that is out of reach (a restart, a failover) before its
 * failure counts as one of the message's attempts.
 */
export const DATABASE_WAIT_MS = 60_000;

/**
 * Wraps a handler so each delivery runs in one transaction together with its inbox row: a duplicate
 * is skipped, and a failing handler rolls the inbox row back so the redelivery runs it again. The
 * inbox key is the queue name `<serviceName>.<consumer>`, unique even when services share a database.
 * While the database is out of reach the delivery waits for it (up to `databaseWaitMs`), holding
 * the message, instead of spending the message's attempts.
 */
export function inboxHandler(
  dataSource: DataSource,
  inboxKey: string,
  handler: EventHandler,
  logger: BusLogger = silentLogger,
  gate: Gate = open,
  databaseWaitMs = DATABASE_WAIT_MS,
): (envelope: EventEnvelope) => Promise<void> {
  const once = (envelope: EventEnvelope) =>
    gate(() =>
      dataSource.transaction(async (manager) => {
        if (!(await claimInboxEntry(manager, inboxKey, envelope.id))) {
          logger.debug(
            { consumer: inboxKey, eventId: envelope.id, type: envelope.type },
            'duplicate event skipped',
          );
          return;
        }
        await handler(envelope, manager);
      }),
    );
  return (envelope) =>
    waitingForDatabase(
      () => once(envelope),
      databaseWaitMs,
      dataSource,
      (error) =>
        logger.warn(
          { consumer: inboxKey, eventId: envelope.id, type: envelope.type, err: describeError(error) },
          'database unavailable; the delivery waits for it',
        ),
    );
}

/**
 * Runs `work` again while it fails because the database is out of reach, for up to `waitMs`: the
 * message is not at fault, and retry attempts spent on a restart would dead-letter every message
 * that arrives during it. The inbox row makes the repeat safe (a COMMIT whose answer was lost is
 * found done). Other failures, and the last one after `waitMs`, are the caller's.
 */
async function waitingForDatabase(
  work: () => Promise<void>,
  waitMs: number,
  dataSource: DataSource,
  onWait: (error: unknown) => void,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let pause = 100, told = false; ; pause = Math.min(pause * 2, 2_000)) {
    try {
      await work();
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error) || !dataSource.isInitialized || Date.now() + pause > deadline)
        throw error;
      if (!told) onWait(error);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
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
  gate: Gate = open,
): Promise<void> {
  const consume = options.broadcast
    ? (envelope: EventEnvelope) => handler(envelope, dataSource.manager)
    : inboxHandler(dataSource, queueNameOf(transport.serviceName, options.consumer), handler, logger, gate);
  return transport.subscribe(options, (envelope) =>
    inTrace(options.consumer, envelope, () => consume(envelope)),
  );
}

/** The two steps of a consumer whose work is slow (see subscribeStaged). */
export interface StagedHandler<P> {
  /**
   * The slow part, with no database connection held across it: it may query (each query takes a
   * pooled connection for itself and gives it back). Must be idempotent: a redelivery runs it again.
   * Null: nothing to commit (the inbox row is still recorded).
   */
  prepare(envelope: EventEnvelope): Promise<P | null>;
  /** The short write, in the transaction that records the inbox row; skipped for a duplicate. */
  commit(envelope: EventEnvelope, manager: EntityManager, prepared: P): Promise<void>;
}

/**
 * Subscribes a consumer whose work is slow (file analysis, a call to a provider): `prepare` runs
 * outside any transaction and `commit` inside the inbox transaction. A handler that held its
 * transaction's connection through slow work while also querying through the pool needed two
 * connections each: as many such deliveries as the pool has connections starved every request.
 */
export function subscribeStaged<P>(
  transport: MessageTransport,
  dataSource: DataSource,
  options: SubscribeOptions,
  handler: StagedHandler<P>,
  logger: BusLogger = silentLogger,
  gate: Gate = open,
): Promise<void> {
  if (options.broadcast) throw new Error('a staged consumer works a durable queue, not a broadcast one');
  const key = queueNameOf(transport.serviceName, options.consumer);
  return transport.subscribe(options, (envelope) =>
    inTrace(options.consumer, envelope, async () => {
      const prepared = await handler.prepare(envelope);
      await inboxHandler(
        dataSource,
        key,
        async (event, manager) => {
          if (prepared !== null) await handler.commit(event, manager, prepared);
        },
        logger,
        gate,
      )(envelope);
    }),
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
