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
}

/** Queue name of a consumer: one durable queue per `<serviceName>.<consumer>`. */
export function queueNameOf(serviceName: string, consumer: string): string {
  return `${serviceName}.${consumer}`;
}

/**
 * Transport of envelopes between services: RabbitMQ (topic exchange `hwp.events`) or, in the
 * embedded mode, an in-process implementation with the same semantics.
 * Producers never call the transport directly: they write the outbox (see Outbox) and the
 * relay publishes it.
 */
export interface MessageTransport {
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
  close(): Promise<void>;
}
