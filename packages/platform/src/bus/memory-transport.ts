import type { EventEnvelope } from '@hwp/contracts';
import {
  broadcastQueueNameOf,
  type MessageTransport,
  newReplicaId,
  queueNameOf,
  type SubscribeOptions,
} from './bus';
import { decodeEnvelope, topicMatches } from './envelope';
import { type BusLogger, describeError, isPermanentFailure, silentLogger } from './logger';

/** A message that exhausted its attempts or could not be decoded. */
export interface DeadLetter {
  queue: string;
  routingKey: string;
  /** Raw message body (JSON of the envelope, or whatever was published). */
  content: string;
  /** The decoded envelope, or null when the body was not a valid envelope. */
  envelope: EventEnvelope | null;
  attempts: number;
  error: string;
  deadLetteredAt: string;
}

export interface MemoryTransportOptions {
  /** Deliveries before a failing message is dead-lettered (default 5). */
  maxAttempts?: number;
  /** Wait before a failed message is delivered again (default 1000 ms). */
  retryDelayMs?: number;
  /** Concurrent deliveries per consumer (default 10). */
  prefetch?: number;
  logger?: BusLogger;
  /** Names this transport's broadcast queues (default random): one transport stands for one process. */
  replicaId?: string;
}

type Handler = (envelope: EventEnvelope) => Promise<void>;

interface PendingMessage {
  routingKey: string;
  content: string;
  /** 1-based number of the delivery this message is waiting for. */
  attempt: number;
}

interface MemoryConsumer {
  owner: MemoryTransport;
  handler: Handler;
  prefetch: number;
  maxAttempts: number;
  retryDelayMs: number;
  active: number;
}

interface MemoryQueue {
  name: string;
  /** A replica's own queue (SubscribeOptions.broadcast): dropped with its consumer, never dead-letters. */
  broadcast: boolean;
  patterns: Set<string>;
  pending: PendingMessage[];
  consumers: MemoryConsumer[];
  nextConsumer: number;
  drainScheduled: boolean;
  deadLetters: DeadLetter[];
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
  private closed = false;

  /** `logger` is the default of the transports this broker hands out. */
  constructor(private readonly logger: BusLogger = silentLogger) {}

  /** A transport whose consumers are named after `serviceName`. */
  transport(serviceName: string, options: MemoryTransportOptions = {}): MemoryTransport {
    return new MemoryTransport({ logger: this.logger, ...options, serviceName, broker: this });
  }

  isClosed(): boolean {
    return this.closed;
  }

  /** Routes a raw body as the exchange would; for tests of malformed messages. */
  publishRaw(routingKey: string, content: string): void {
    if (this.closed) throw new Error('memory broker is closed');
    for (const queue of this.queues.values()) {
      if ([...queue.patterns].some((pattern) => topicMatches(pattern, routingKey))) {
        queue.pending.push({ routingKey, content, attempt: 1 });
        this.scheduleDrain(queue);
      }
    }
  }

  /** Messages dead-lettered from `queue` (`<serviceName>.<consumer>`), oldest first. */
  deadLetters(queue: string): DeadLetter[] {
    return [...(this.queues.get(queue)?.deadLetters ?? [])];
  }

  /** Messages waiting in `queue`, not counting those in a handler or waiting for a retry. */
  pendingCount(queue: string): number {
    return this.queues.get(queue)?.pending.length ?? 0;
  }

  queueNames(): string[] {
    return [...this.queues.keys()];
  }

  /** Stops deliveries and retries and waits for the handlers that are running. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** @internal */
  bind(queueName: string, patterns: string[], consumer: MemoryConsumer, broadcast = false): void {
    if (this.closed) throw new Error('memory broker is closed');
    let queue = this.queues.get(queueName);
    if (!queue) {
      queue = {
        name: queueName,
        broadcast,
        patterns: new Set(),
        pending: [],
        consumers: [],
        nextConsumer: 0,
        drainScheduled: false,
        deadLetters: [],
      };
      this.queues.set(queueName, queue);
    }
    for (const pattern of patterns) queue.patterns.add(pattern);
    queue.consumers.push(consumer);
    this.scheduleDrain(queue);
  }

  /** @internal */
  unbindConsumersOf(owner: MemoryTransport): void {
    for (const queue of this.queues.values()) {
      queue.consumers = queue.consumers.filter((consumer) => consumer.owner !== owner);
      // Like an auto-deleted exclusive queue: it goes with its process.
      if (queue.broadcast && queue.consumers.length === 0) this.queues.delete(queue.name);
    }
  }

  /** @internal Waits for the running handlers of `owner`'s consumers. */
  async settle(owner: MemoryTransport): Promise<void> {
    while (owner.activeDeliveries.size > 0) await Promise.allSettled([...owner.activeDeliveries]);
  }

  private scheduleDrain(queue: MemoryQueue): void {
    if (queue.drainScheduled || this.closed) return;
    queue.drainScheduled = true;
    // Deliveries never run inside publish(): a producer must not observe its consumers' work or errors.
    setImmediate(() => {
      queue.drainScheduled = false;
      this.drain(queue);
    });
  }

  private drain(queue: MemoryQueue): void {
    while (!this.closed && queue.pending.length > 0) {
      const consumer = this.pickConsumer(queue);
      if (!consumer) return;
      const message = queue.pending.shift()!;
      this.deliver(queue, consumer, message);
    }
  }

  private pickConsumer(queue: MemoryQueue): MemoryConsumer | undefined {
    const count = queue.consumers.length;
    for (let i = 0; i < count; i++) {
      const index = (queue.nextConsumer + i) % count;
      const consumer = queue.consumers[index];
      if (consumer.active < consumer.prefetch) {
        queue.nextConsumer = (index + 1) % count;
        return consumer;
      }
    }
    return undefined;
  }

  private deliver(queue: MemoryQueue, consumer: MemoryConsumer, message: PendingMessage): void {
    consumer.active++;
    const run = (async () => {
      const decoded = decodeEnvelope(message.content);
      if (!decoded.ok) {
        if (queue.broadcast) {
          consumer.owner.logger.error(
            { queue: queue.name, reason: decoded.reason },
            'malformed broadcast message; dropped',
          );
        } else {
          this.deadLetter(queue, message, null, decoded.reason);
        }
        return;
      }
      try {
        await consumer.handler(decoded.envelope);
      } catch (error) {
        this.failed(queue, consumer, message, decoded.envelope, error);
      }
    })();
    const tracked = run.finally(() => {
      consumer.active--;
      this.inFlight.delete(tracked);
      consumer.owner.activeDeliveries.delete(tracked);
      this.scheduleDrain(queue);
    });
    this.inFlight.add(tracked);
    consumer.owner.activeDeliveries.add(tracked);
  }

  private failed(
    queue: MemoryQueue,
    consumer: MemoryConsumer,
    message: PendingMessage,
    envelope: EventEnvelope,
    error: unknown,
  ): void {
    const reason = describeError(error);
    const logger = consumer.owner.logger;
    if (message.attempt >= consumer.maxAttempts || isPermanentFailure(error)) {
      // Broadcast queues have no dead-letter queue: each replica's copy is only for its own clients.
      logger.error(
        {
          queue: queue.name,
          eventId: envelope.id,
          type: envelope.type,
          attempts: message.attempt,
          err: reason,
        },
        queue.broadcast
          ? 'broadcast handler failed for the last time; message dropped'
          : 'event handler failed for the last time; dead-lettered',
      );
      if (queue.broadcast) return;
      this.deadLetter(queue, message, envelope, reason);
      return;
    }
    logger.warn(
      { queue: queue.name, eventId: envelope.id, type: envelope.type, attempt: message.attempt, err: reason },
      'event handler failed; will retry',
    );
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      queue.pending.push({ ...message, attempt: message.attempt + 1 });
      this.scheduleDrain(queue);
    }, consumer.retryDelayMs);
    // A message waiting for its retry must not keep an otherwise finished process alive.
    timer.unref();
    this.retryTimers.add(timer);
  }

  private deadLetter(
    queue: MemoryQueue,
    message: PendingMessage,
    envelope: EventEnvelope | null,
    error: string,
  ): void {
    queue.deadLetters.push({
      queue: queue.name,
      routingKey: message.routingKey,
      content: message.content,
      envelope,
      attempts: message.attempt,
      error,
      deadLetteredAt: new Date().toISOString(),
    });
  }
}

/**
 * The embedded mode's transport: one per service, all on one MemoryBroker. Same semantics as the
 * AMQP transport: topic routing, one queue per `<serviceName>.<consumer>`, asynchronous delivery,
 * bounded retries with a delay, then a dead-letter list. A broadcast subscription gets a queue of
 * its own per transport (`<serviceName>.<consumer>.<replicaId>`), so every transport of the same
 * service receives every message; failures there are retried, then dropped.
 */
export class MemoryTransport implements MessageTransport {
  readonly kind = 'memory' as const;
  readonly serviceName: string;
  /** Stands for the process: broadcast queues are named after it. */
  readonly replicaId: string;
  readonly broker: MemoryBroker;
  /** @internal */
  readonly logger: BusLogger;
  /** @internal */
  readonly activeDeliveries = new Set<Promise<void>>();

  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly prefetch: number;
  private closed = false;

  constructor(options: MemoryTransportOptions & { serviceName: string; broker?: MemoryBroker }) {
    this.serviceName = options.serviceName;
    this.replicaId = options.replicaId ?? newReplicaId();
    this.broker = options.broker ?? new MemoryBroker();
    this.logger = options.logger ?? silentLogger;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.prefetch = options.prefetch ?? 10;
  }

  async publish(envelope: EventEnvelope): Promise<void> {
    this.assertOpen();
    // Serialised like on the wire, so consumers never share (or mutate) the producer's object.
    this.broker.publishRaw(envelope.type, JSON.stringify(envelope));
  }

  async subscribe(options: SubscribeOptions, handler: Handler): Promise<void> {
    this.assertOpen();
    if (options.patterns.length === 0) throw new Error(`consumer ${options.consumer} has no patterns`);
    const queue = options.broadcast
      ? broadcastQueueNameOf(this.serviceName, options.consumer, this.replicaId)
      : queueNameOf(this.serviceName, options.consumer);
    this.broker.bind(
      queue,
      options.patterns,
      {
        owner: this,
        handler,
        prefetch: Math.max(1, options.prefetch ?? this.prefetch),
        maxAttempts: Math.max(1, options.maxAttempts ?? this.maxAttempts),
        retryDelayMs: Math.max(0, options.retryDelayMs ?? this.retryDelayMs),
        active: 0,
      },
      options.broadcast === true,
    );
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

  /** Detaches this service's consumers (their queues keep collecting) and waits for running handlers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.broker.unbindConsumersOf(this);
    await this.broker.settle(this);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('memory transport is closed');
    if (this.broker.isClosed()) throw new Error('memory broker is closed');
  }
}
