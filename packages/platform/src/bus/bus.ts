import { randomBytes } from 'node:crypto';
import type { EventEnvelope } from '@hwp/contracts';
import type { EntityManager } from 'typeorm';

/** What a producer hands to the outbox; id, occurredAt and version are filled in. */
export interface OutgoingEvent<TData = unknown> {
  /** Routing key, e.g. `file.uploaded.v1`. */
  type: string;
  tenantId?: string;
  workspace?: string;
  actor: string;
  correlationId?: string;
  /** Default: the `traceparent` of the current request or consumer. */
  traceparent?: string;
  data: TData;
}

export type EventHandler<TData = unknown> = (
  event: EventEnvelope<TData>,
  manager: EntityManager,
) => Promise<void>;

export interface SubscribeOptions {
  /** Durable consumer name; one queue `<service>.<consumer>` per name. Used for inbox deduplication. */
  consumer: string;
  /** Routing-key patterns (topic syntax, `*` and `#`). */
  patterns: string[];
  /** Deliveries before a failing message goes to the dead-letter queue (default from config). */
  maxAttempts?: number;
  /** Wait before a failed message is delivered again (default from config). */
  retryDelayMs?: number;
  /** Messages handled concurrently by this consumer (default 10). */
  prefetch?: number;
  /**
   * A handler still running after this long counts as failed and the message is retried (default
   * DEFAULT_HANDLER_TIMEOUT_MS), so one that never answers cannot hold the consumer forever.
   */
  handlerTimeoutMs?: number;
  /**
   * Every process (replica) of the service receives every message, instead of the replicas sharing
   * one durable queue. Each process gets its own exclusive, auto-deleted queue
   * `<namespace><service>.<consumer>.<replicaId>` bound to the same patterns, for work that is local
   * to the process (pushing to the SSE clients connected to it). Such a queue lives as long as the
   * process's connection: messages published while it is down are not kept for it, so the handler
   * must be able to catch up from a durable source (the event log) when that matters.
   * No inbox row is written (each replica must see each message; `createBus().subscribe` passes the
   * data source's manager, outside any transaction) and there is no dead-letter queue: a failing
   * handler is retried in the process up to `maxAttempts` times, then the message is dropped and
   * logged. Redeliveries are absorbed by an in-memory set of recently handled event ids.
   */
  broadcast?: boolean;
}

/** Default of SubscribeOptions.handlerTimeoutMs: 5 minutes. */
export const DEFAULT_HANDLER_TIMEOUT_MS = 5 * 60 * 1000;

/** Queue name of a consumer: one durable queue per `<serviceName>.<consumer>`. */
export function queueNameOf(serviceName: string, consumer: string): string {
  return `${serviceName}.${consumer}`;
}

/** Queue of one replica's broadcast consumer: `<serviceName>.<consumer>.<replicaId>`. */
export function broadcastQueueNameOf(serviceName: string, consumer: string, replicaId: string): string {
  return `${queueNameOf(serviceName, consumer)}.${replicaId}`;
}

/** A random id for a process among the replicas of a service (names its broadcast queues). */
export function newReplicaId(): string {
  return randomBytes(6).toString('hex');
}

/**
 * Ids of recently handled events, at most `capacity` (the oldest are forgotten first): a replica's
 * guard against redeliveries on its broadcast queue, where no inbox table is involved.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      // A Set iterates in insertion order: the first entry is the oldest.
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
  }
}

/**
 * Transport of envelopes between services: RabbitMQ (topic exchange `hwp.events`) or, in the
 * embedded mode, an in-process implementation with the same semantics.
 * Producers never call the transport directly: they write the outbox (see Outbox) and the
 * relay publishes it.
 */
/** What became of one delivery to a consumer queue. */
export type DeliveryOutcome = 'consumed' | 'retried' | 'dead_lettered';

/** Counts of the bus for metrics: every transport reports to the observer set on it (if any). */
export interface BusObserver {
  /** A message the broker confirmed (the outbox relay published it). */
  published(routingKey: string): void;
  delivered(queue: string, outcome: DeliveryOutcome): void;
}

export interface MessageTransport {
  /** Told about publishes and deliveries (metrics); unset = nobody listens. */
  observer?: BusObserver;
  readonly kind: 'amqp' | 'memory';
  /** Owner of the consumers this transport creates; queues are named `<serviceName>.<consumer>`. */
  readonly serviceName: string;
  /** Publishes with a broker confirm; resolves only once the broker has the message. */
  publish(envelope: EventEnvelope): Promise<void>;
  /** Registers a consumer. The handler runs inside a DB transaction that also records the inbox row. */
  subscribe(options: SubscribeOptions, handler: (envelope: EventEnvelope) => Promise<void>): Promise<void>;
  /**
   * Starts the transport (connects, for AMQP); idempotent. Subscriptions made before or after it
   * are honoured either way.
   */
  start(): Promise<void>;
  /** True when connected (or always, in memory). */
  isConnected(): boolean;
  /** Reachability check for /readyz; throws when the broker is not reachable. */
  ping(): Promise<void>;
  /**
   * This service's consumers that stopped making progress for longer than `olderThanMs`, one sentence
   * each (empty when every consumer flows); the `bus` check of /readyz reports them.
   */
  stalledConsumers?(olderThanMs: number): string[];
  close(): Promise<void>;
}
