import type { EventEnvelope } from '@hwp/contracts';
import { newId } from '../ids';
import type { BusObserver } from './bus';
import { decodeEnvelope } from './envelope';
import { type BusLogger, describeError, isPermanentFailure } from './logger';
import type { DeadLetterKeeper } from './memory-dead-letters';
import { runHandler } from './timeouts';

export type MemoryHandler = (envelope: EventEnvelope) => Promise<void>;

/** The transport a consumer belongs to, as the queue sees it. */
export interface ConsumerOwner {
  readonly serviceName: string;
  readonly logger: BusLogger;
  readonly activeDeliveries: Set<Promise<void>>;
  readonly deadLetterKeeper: DeadLetterKeeper;
  readonly observer?: BusObserver;
}

export interface MemoryConsumer {
  owner: ConsumerOwner;
  handler: MemoryHandler;
  prefetch: number;
  maxAttempts: number;
  retryDelayMs: number;
  handlerTimeoutMs: number;
  active: number;
}

/** What a queue needs from its broker. */
export interface QueueHost {
  isClosed(): boolean;
  /** Tracks a delivery until it settles (the broker's close() waits for them). */
  track(delivery: Promise<void>): void;
  /** Runs `run` after `ms` unless the broker closes first. */
  later(ms: number, run: () => void): void;
}

interface Message {
  routingKey: string;
  content: string;
  /** 1-based number of the delivery this message is waiting for. */
  attempt: number;
  /** When it entered the queue for this delivery (ms since epoch). */
  queuedAt: number;
}

export interface QueueStats {
  pending: number;
  inHandler: number;
  consumers: number;
  /** Queue time of the oldest message pending or in a handler, or null when there is none. */
  oldestQueuedAt: number | null;
}

/**
 * One queue of the in-process broker: FIFO delivery to its consumers within their prefetch, bounded
 * retries with a delay, then the owner transport's dead letters. Nothing a handler does (throw,
 * throw synchronously, never answer) stops it: each delivery settles within the handler timeout.
 */
export class MemoryQueue {
  readonly patterns = new Set<string>();
  consumers: MemoryConsumer[] = [];
  private readonly pending: Message[] = [];
  private readonly inHandler = new Set<Message>();
  private nextConsumer = 0;
  private drainScheduled = false;

  constructor(
    readonly name: string,
    /** The service whose consumer this queue feeds. */
    readonly service: string,
    /** A replica's own queue (SubscribeOptions.broadcast): dropped with its consumer, never dead-letters. */
    readonly broadcast: boolean,
    private readonly host: QueueHost,
  ) {}

  get pendingCount(): number {
    return this.pending.length;
  }

  stats(): QueueStats {
    let oldest: number | null = null;
    for (const message of [...this.pending, ...this.inHandler]) {
      if (oldest === null || message.queuedAt < oldest) oldest = message.queuedAt;
    }
    return {
      pending: this.pending.length,
      inHandler: this.inHandler.size,
      consumers: this.consumers.length,
      oldestQueuedAt: oldest,
    };
  }

  enqueue(routingKey: string, content: string, attempt = 1): void {
    this.pending.push({ routingKey, content, attempt, queuedAt: Date.now() });
    this.scheduleDrain();
  }

  addConsumer(consumer: MemoryConsumer): void {
    this.consumers.push(consumer);
    this.scheduleDrain();
  }

  removeConsumersOf(owner: ConsumerOwner): void {
    this.consumers = this.consumers.filter((consumer) => consumer.owner !== owner);
  }

  private scheduleDrain(): void {
    if (this.drainScheduled || this.host.isClosed()) return;
    this.drainScheduled = true;
    // Deliveries never run inside publish(): a producer must not observe its consumers' work or errors.
    setImmediate(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (!this.host.isClosed() && this.pending.length > 0) {
      const consumer = this.pickConsumer();
      if (!consumer) return;
      this.deliver(consumer, this.pending.shift()!);
    }
  }

  private pickConsumer(): MemoryConsumer | undefined {
    const count = this.consumers.length;
    for (let i = 0; i < count; i++) {
      const index = (this.nextConsumer + i) % count;
      const consumer = this.consumers[index];
      if (consumer.active < consumer.prefetch) {
        this.nextConsumer = (index + 1) % count;
        return consumer;
      }
    }
    return undefined;
  }

  private deliver(consumer: MemoryConsumer, message: Message): void {
    consumer.active++;
    this.inHandler.add(message);
    const run = this.handle(consumer, message).catch((error: unknown) => {
      // Only a bug in the bookkeeping gets here; the message goes round again rather than vanish.
      consumer.owner.logger.error(
        { queue: this.name, err: describeError(error) },
        'memory delivery failed unexpectedly; message queued again',
      );
      this.host.later(consumer.retryDelayMs, () =>
        this.enqueue(message.routingKey, message.content, message.attempt),
      );
    });
    const tracked = run.finally(() => {
      consumer.active--;
      this.inHandler.delete(message);
      consumer.owner.activeDeliveries.delete(tracked);
      this.scheduleDrain();
    });
    this.host.track(tracked);
    consumer.owner.activeDeliveries.add(tracked);
  }

  private async handle(consumer: MemoryConsumer, message: Message): Promise<void> {
    const decoded = decodeEnvelope(message.content);
    if (!decoded.ok) {
      consumer.owner.logger.error(
        { queue: this.name, reason: decoded.reason },
        this.broadcast ? 'malformed broadcast message; dropped' : 'malformed message; dead-lettered',
      );
      if (!this.broadcast) this.deadLetter(consumer, message, null, decoded.reason);
      return;
    }
    try {
      await runHandler(consumer.handler, decoded.envelope, consumer.handlerTimeoutMs);
    } catch (error) {
      this.failed(consumer, message, decoded.envelope, error);
      return;
    }
    consumer.owner.observer?.delivered(this.name, 'consumed');
  }

  private failed(consumer: MemoryConsumer, message: Message, envelope: EventEnvelope, error: unknown): void {
    const reason = describeError(error);
    const logger = consumer.owner.logger;
    const log = {
      queue: this.name,
      eventId: envelope.id,
      type: envelope.type,
      attempt: message.attempt,
      err: reason,
    };
    if (message.attempt >= consumer.maxAttempts || isPermanentFailure(error)) {
      // Broadcast queues have no dead letters: each replica's copy is only for its own clients.
      logger.error(
        log,
        this.broadcast
          ? 'broadcast handler failed for the last time; message dropped'
          : 'event handler failed for the last time; dead-lettered',
      );
      if (!this.broadcast) this.deadLetter(consumer, message, envelope, reason);
      return;
    }
    consumer.owner.observer?.delivered(this.name, 'retried');
    logger.warn(log, 'event handler failed; will retry');
    this.host.later(consumer.retryDelayMs, () =>
      this.enqueue(message.routingKey, message.content, message.attempt + 1),
    );
  }

  private deadLetter(
    consumer: MemoryConsumer,
    message: Message,
    envelope: EventEnvelope | null,
    error: string,
  ): void {
    consumer.owner.observer?.delivered(this.name, 'dead_lettered');
    consumer.owner.deadLetterKeeper.keep({
      id: newId(),
      queue: this.name,
      routingKey: message.routingKey,
      content: message.content,
      envelope,
      attempts: message.attempt,
      error,
      deadLetteredAt: new Date().toISOString(),
    });
  }
}
