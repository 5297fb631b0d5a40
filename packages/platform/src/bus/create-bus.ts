import type { EventOf, RoutingKey } from '@hwp/contracts';
import type { DataSource, EntityManager } from 'typeorm';
import type { EventHandler, MessageTransport, SubscribeOptions } from './bus';
import { type Gate, type StagedHandler, subscribeStaged, subscribeWithInbox } from './inbox';
import { type BusLogger, describeError, guardLogger } from './logger';
import { Outbox } from './outbox';
import { OutboxRelay, type OutboxRelayOptions } from './outbox-relay';
import { checkedEvent } from './typed-events';

export interface BusOptions {
  serviceName: string;
  dataSource: DataSource;
  transport: MessageTransport;
  logger: BusLogger;
  /** Relay poll interval (default 250 ms). */
  relayIntervalMs?: number;
  /** The relay's time limits and back-off (defaults in OutboxRelayOptions). */
  relay?: Pick<
    OutboxRelayOptions,
    'maxBackoffMs' | 'maxPublishBackoffMs' | 'statementTimeoutMs' | 'publishTimeoutMs' | 'batchTimeoutMs'
  >;
  /** Default for subscriptions that do not set their own. */
  maxAttempts?: number;
  /** Default for subscriptions that do not set their own. */
  retryDelayMs?: number;
  /**
   * Inbox transactions the service's consumers hold at once, all consumers together (default: half
   * the database pool), so deliveries can never take every pooled connection from the HTTP requests.
   */
  maxHandlerTransactions?: number;
}

export interface Bus {
  readonly serviceName: string;
  /** The service's database: outbox, inbox and dead letters live there. */
  readonly dataSource: DataSource;
  readonly outbox: Outbox;
  readonly relay: OutboxRelay;
  readonly transport: MessageTransport;
  /** Starts the transport (connects, for AMQP) and the outbox relay. */
  start(): Promise<void>;
  /** Consumes with inbox deduplication: the handler runs in the transaction that records the event. */
  subscribe(options: SubscribeOptions, handler: EventHandler): Promise<void>;
  /**
   * `subscribe` for the routing keys `keys`: the handler gets each event typed by its key, its payload
   * checked first (a message that fails the check is dead-lettered at once, see checkedEvent).
   */
  subscribeTo<K extends RoutingKey>(
    options: Omit<SubscribeOptions, 'patterns'> & { keys: readonly K[] },
    handler: (event: EventOf<K>, manager: EntityManager) => Promise<void>,
  ): Promise<void>;
  /** Consumes slow work: `prepare` outside any transaction, `commit` in the inbox transaction. */
  subscribeStaged<P>(options: SubscribeOptions, handler: StagedHandler<P>): Promise<void>;
  /**
   * Runs `work` in a transaction and nudges the relay after it commits, so events added with
   * `outbox.add(manager, ...)` inside go out without waiting for the next poll.
   */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T>;
  /** Stops the relay (waiting for its batch), then closes the transport. */
  close(): Promise<void>;
}

export function createBus(options: BusOptions): Bus {
  const { serviceName, dataSource, transport } = options;
  const logger = guardLogger(options.logger);
  if (transport.serviceName !== serviceName) {
    throw new Error(`transport belongs to ${transport.serviceName}, not ${serviceName}`);
  }
  const outbox = new Outbox();
  const relay = new OutboxRelay({
    ...options.relay,
    dataSource,
    transport,
    logger,
    intervalMs: options.relayIntervalMs,
  });
  let closed = false;
  const poolSize = Number((dataSource.options as { poolSize?: number }).poolSize ?? 10);
  const gate = slots(options.maxHandlerTransactions ?? Math.max(1, Math.floor(poolSize / 2)));
  // A subscription's own retry settings, else the bus's.
  const withDefaults = (subscribeOptions: SubscribeOptions): SubscribeOptions => ({
    ...subscribeOptions,
    maxAttempts: subscribeOptions.maxAttempts ?? options.maxAttempts,
    retryDelayMs: subscribeOptions.retryDelayMs ?? options.retryDelayMs,
  });

  return {
    serviceName,
    dataSource,
    outbox,
    relay,
    transport,
    async start() {
      if (closed) throw new Error('bus is closed');
      await transport.start();
      relay.start();
    },
    subscribe(subscribeOptions, handler) {
      return subscribeWithInbox(transport, dataSource, withDefaults(subscribeOptions), handler, logger, gate);
    },
    subscribeTo(subscribeOptions, handler) {
      const { keys, ...rest } = subscribeOptions;
      const typed: EventHandler = (envelope, manager) => handler(checkedEvent(envelope, keys), manager);
      return subscribeWithInbox(
        transport,
        dataSource,
        withDefaults({ ...rest, patterns: [...keys] }),
        typed,
        logger,
        gate,
      );
    },
    subscribeStaged(subscribeOptions, handler) {
      return subscribeStaged(transport, dataSource, withDefaults(subscribeOptions), handler, logger, gate);
    },
    async transaction(work) {
      const result = await dataSource.transaction(work);
      relay.nudge();
      return result;
    },
    async close() {
      if (closed) return;
      closed = true;
      await relay.stop();
      await transport.close().catch((error: unknown) => {
        logger.warn({ err: describeError(error) }, 'closing the transport failed');
      });
    },
  };
}

/** At most `size` works at once, the others waiting in arrival order. */
function slots(size: number): Gate {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
