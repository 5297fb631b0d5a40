import type { EventEnvelope } from '@hwp/contracts';
import {
  type BusObserver,
  broadcastQueueNameOf,
  DEFAULT_HANDLER_TIMEOUT_MS,
  type MessageTransport,
  newReplicaId,
  queueNameOf,
  type SubscribeOptions,
} from './bus';
import { topicMatches } from './envelope';
import { type BusLogger, guardLogger, silentLogger } from './logger';
import { type DeadLetter, DeadLetterKeeper, type DeadLetterSink } from './memory-dead-letters';
import { type ConsumerOwner, type MemoryConsumer, type MemoryHandler, MemoryQueue } from './memory-queue';

export type { DeadLetter, DeadLetterSink } from './memory-dead-letters';

export interface MemoryTransportOptions {
  /** Deliveries before a failing message is dead-lettered (default 5). */
  maxAttempts?: number;
  /** Wait before a failed message is delivered again (default 1000 ms). */
  retryDelayMs?: number;
  /** Concurrent deliveries per consumer (default 10). */
  prefetch?: number;
  /** A handler still running after this long counts as failed (default 5 minutes). */
  handlerTimeoutMs?: number;
  logger?: BusLogger;
  /** Names this transport's broadcast queues (default random): one transport stands for one process. */
  replicaId?: string;
  /**
   * Where this transport's dead letters are stored (its service's `dead_letters` table). Failed writes
   * are retried; without a sink they are only kept in memory (see MemoryBroker.deadLetters).
   */
  deadLetterSink?: DeadLetterSink;
}

/**
 * In-process stand-in for the RabbitMQ topic exchange, shared by every service of the embedded mode.
 * Queues outlive their consumers like durable queues do, so a service that re-subscribes resumes
 * where it stopped; messages matching no queue are dropped, as the exchange would.
 */
export class MemoryBroker {
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly transports = new Set<MemoryTransport>();
  private readonly host = {
    isClosed: () => this.closed,
    track: (delivery: Promise<void>) => {
      this.inFlight.add(delivery);
      void delivery.finally(() => this.inFlight.delete(delivery));
    },
    later: (ms: number, run: () => void) => {
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.retryTimers.delete(timer);
        if (!this.closed) run();
      }, ms);
      // A message waiting for its retry must not keep an otherwise finished process alive.
      timer.unref();
      this.retryTimers.add(timer);
    },
  };
  private closed = false;

  /** `logger` is the default of the transports this broker hands out. */
  constructor(private readonly logger: BusLogger = silentLogger) {}

  /** A transport whose consumers are named after `serviceName`. */
  transport(serviceName: string, options: MemoryTransportOptions = {}): MemoryTransport {
    const transport = new MemoryTransport({ logger: this.logger, ...options, serviceName, broker: this });
    this.transports.add(transport);
    return transport;
  }

  isClosed(): boolean {
    return this.closed;
  }

  /** Routes a raw body as the exchange would; for tests of malformed messages. */
  publishRaw(routingKey: string, content: string): void {
    if (this.closed) throw new Error('memory broker is closed');
    for (const queue of this.queues.values()) {
      if ([...queue.patterns].some((pattern) => topicMatches(pattern, routingKey))) {
        queue.enqueue(routingKey, content);
      }
    }
  }

  /**
   * Messages dead-lettered from `queue` (`<serviceName>.<consumer>`) that are held in memory, oldest
   * first: all of them for transports without a dead-letter sink, otherwise those not stored yet.
   */
  deadLetters(queue: string): DeadLetter[] {
    return [...this.transports]
      .flatMap((transport) => transport.deadLetterKeeper.list(queue))
      .sort((a, b) => a.deadLetteredAt.localeCompare(b.deadLetteredAt));
  }

  /** Messages waiting in `queue`, not counting those in a handler or waiting for a retry. */
  pendingCount(queue: string): number {
    return this.queues.get(queue)?.pendingCount ?? 0;
  }

  queueNames(): string[] {
    return [...this.queues.keys()];
  }

  /** Stops deliveries and retries, waits for the handlers that are running, settles dead letters. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await Promise.allSettled([...this.transports].map((transport) => transport.deadLetterKeeper.close()));
  }

  /** @internal */
  bind(
    queueName: string,
    service: string,
    patterns: string[],
    consumer: MemoryConsumer,
    broadcast: boolean,
  ): void {
    if (this.closed) throw new Error('memory broker is closed');
    const queue = this.queueNamed(queueName, service, broadcast);
    for (const pattern of patterns) queue.patterns.add(pattern);
    queue.addConsumer(consumer);
  }

  /** @internal Puts a message straight into a queue, past the exchange (a replay reaches only its consumer). */
  enqueue(queueName: string, service: string, routingKey: string, content: string): void {
    if (this.closed) throw new Error('memory broker is closed');
    this.queueNamed(queueName, service, false).enqueue(routingKey, content);
  }

  /** @internal Queues that feed `service`'s consumers (broadcast ones only of `replicaId`). */
  queuesOf(service: string, replicaId: string): MemoryQueue[] {
    return [...this.queues.values()].filter(
      (queue) => queue.service === service && (!queue.broadcast || queue.name.endsWith(`.${replicaId}`)),
    );
  }

  /** @internal */
  unbindConsumersOf(owner: ConsumerOwner): void {
    for (const queue of this.queues.values()) {
      queue.removeConsumersOf(owner);
      // Like an auto-deleted exclusive queue: it goes with its process.
      if (queue.broadcast && queue.consumers.length === 0) this.queues.delete(queue.name);
    }
  }

  /** @internal Waits for the running handlers of `owner`'s consumers. */
  async settle(owner: ConsumerOwner): Promise<void> {
    while (owner.activeDeliveries.size > 0) await Promise.allSettled([...owner.activeDeliveries]);
  }

  private queueNamed(name: string, service: string, broadcast: boolean): MemoryQueue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new MemoryQueue(name, service, broadcast, this.host);
      this.queues.set(name, queue);
    }
    return queue;
  }
}

/**
 * The embedded mode's transport: one per service, all on one MemoryBroker. Same semantics as the
 * AMQP transport: topic routing, one queue per `<serviceName>.<consumer>`, asynchronous delivery,
 * bounded retries with a delay, then dead letters (stored through the sink, like `<queue>.dlq`). A
 * broadcast subscription gets a queue of its own per transport (`<serviceName>.<consumer>.<replicaId>`),
 * so every transport of the same service receives every message; failures there are retried, then dropped.
 */
export class MemoryTransport implements MessageTransport, ConsumerOwner {
  readonly kind = 'memory' as const;
  readonly serviceName: string;
  /** Stands for the process: broadcast queues are named after it. */
  readonly replicaId: string;
  readonly broker: MemoryBroker;
  /** @internal */
  readonly logger: BusLogger;
  /** @internal */
  readonly activeDeliveries = new Set<Promise<void>>();
  /** @internal */
  readonly deadLetterKeeper: DeadLetterKeeper;
  observer?: BusObserver;

  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly prefetch: number;
  private readonly handlerTimeoutMs: number;
  private closed = false;

  constructor(options: MemoryTransportOptions & { serviceName: string; broker: MemoryBroker }) {
    this.serviceName = options.serviceName;
    this.replicaId = options.replicaId ?? newReplicaId();
    this.broker = options.broker;
    this.logger = guardLogger(options.logger ?? silentLogger);
    this.maxAttempts = options.maxAttempts ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.prefetch = options.prefetch ?? 10;
    this.handlerTimeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
    this.deadLetterKeeper = new DeadLetterKeeper({ sink: options.deadLetterSink, logger: this.logger });
  }

  async publish(envelope: EventEnvelope): Promise<void> {
    this.assertOpen();
    // Serialised like on the wire, so consumers never share (or mutate) the producer's object.
    this.broker.publishRaw(envelope.type, JSON.stringify(envelope));
  }

  async subscribe(options: SubscribeOptions, handler: MemoryHandler): Promise<void> {
    this.assertOpen();
    if (options.patterns.length === 0) throw new Error(`consumer ${options.consumer} has no patterns`);
    const queue = options.broadcast
      ? broadcastQueueNameOf(this.serviceName, options.consumer, this.replicaId)
      : queueNameOf(this.serviceName, options.consumer);
    this.broker.bind(
      queue,
      this.serviceName,
      options.patterns,
      {
        owner: this,
        handler,
        prefetch: Math.max(1, options.prefetch ?? this.prefetch),
        maxAttempts: Math.max(1, options.maxAttempts ?? this.maxAttempts),
        retryDelayMs: Math.max(0, options.retryDelayMs ?? this.retryDelayMs),
        handlerTimeoutMs: Math.max(1, options.handlerTimeoutMs ?? this.handlerTimeoutMs),
        active: 0,
      },
      options.broadcast === true,
    );
  }

  /**
   * Puts a dead letter's message back into `queue`, one of this service's consumer queues, so that
   * consumer (and only it) handles it again.
   */
  requeue(queue: string, routingKey: string, content: string): void {
    this.assertOpen();
    if (!queue.startsWith(`${this.serviceName}.`)) {
      throw new Error(`queue ${queue} does not belong to ${this.serviceName}`);
    }
    this.broker.enqueue(queue, this.serviceName, routingKey, content);
  }

  /**
   * This service's queues whose oldest message (pending or in its handler) has waited longer than
   * `olderThanMs`, i.e. whose consumer is stalled or gone; plus dead letters still not stored.
   */
  stalledConsumers(olderThanMs: number): string[] {
    const now = Date.now();
    const problems: string[] = [];
    for (const queue of this.broker.queuesOf(this.serviceName, this.replicaId)) {
      const stats = queue.stats();
      if (stats.oldestQueuedAt === null || now - stats.oldestQueuedAt <= olderThanMs) continue;
      problems.push(
        `consumer queue ${queue.name} stalled: oldest message waiting ${Math.round((now - stats.oldestQueuedAt) / 1000)} s (${stats.pending} pending, ${stats.inHandler} in handler, ${stats.consumers} consumers)`,
      );
    }
    const unsaved = this.deadLetterKeeper.unsavedOlderThan(olderThanMs, now);
    if (unsaved > 0) problems.push(`${unsaved} dead letters not stored yet`);
    return problems;
  }

  /** Nothing to connect to; only refuses a closed transport. */
  async start(): Promise<void> {
    this.assertOpen();
  }

  isConnected(): boolean {
    return !this.closed && !this.broker.isClosed();
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  /**
   * Detaches this service's consumers (their queues keep collecting), waits for running handlers and
   * makes a last attempt to store dead letters that are still waiting.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.broker.unbindConsumersOf(this);
    await this.broker.settle(this);
    await this.deadLetterKeeper.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('memory transport is closed');
    if (this.broker.isClosed()) throw new Error('memory broker is closed');
  }
}
