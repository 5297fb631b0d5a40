import type { EventEnvelope } from '@hwp/contracts';
import type * as amqp from 'amqplib';
import type { RecentIds } from './bus';

export type Handler = (envelope: EventEnvelope) => Promise<void>;

export interface Subscription {
  consumer: string;
  queue: string;
  /** One exclusive queue per process (SubscribeOptions.broadcast): no retry or dead-letter queues. */
  broadcast: boolean;
  /** Ids handled on a broadcast queue, to skip redeliveries (no inbox there). */
  seen: RecentIds | null;
  patterns: string[];
  maxAttempts: number;
  retryDelayMs: number;
  prefetch: number;
  handlerTimeoutMs: number;
  handler: Handler;
  /** Connection the consumer currently runs on, or is being set up on. */
  model: amqp.ChannelModel | null;
  channel: amqp.ConfirmChannel | null;
  consumerTag: string | null;
  /** Deliveries in a handler, with the time each started. */
  inFlight: Map<Promise<void>, number>;
  /** Since when the subscription has had no consumer on the broker (null while it consumes). */
  detachedSince: number | null;
}

/** The subscription has no consumer on the broker any more; keeps the time it first lost it. */
export function markDetached(sub: Subscription): void {
  sub.model = null;
  sub.channel = null;
  sub.consumerTag = null;
  sub.detachedSince ??= Date.now();
}

/**
 * Subscriptions that have had no consumer on the broker for longer than `olderThanMs`, and handlers
 * running longer than that.
 */
export function stalledSubscriptions(subscriptions: readonly Subscription[], olderThanMs: number): string[] {
  const now = Date.now();
  const problems: string[] = [];
  for (const sub of subscriptions) {
    if (sub.detachedSince !== null && now - sub.detachedSince > olderThanMs) {
      problems.push(
        `consumer ${sub.queue} not consuming for ${Math.round((now - sub.detachedSince) / 1000)} s`,
      );
    }
    const oldest = Math.min(...sub.inFlight.values());
    if (Number.isFinite(oldest) && now - oldest > olderThanMs) {
      problems.push(`consumer ${sub.queue} has a handler running for ${Math.round((now - oldest) / 1000)} s`);
    }
  }
  return problems;
}
