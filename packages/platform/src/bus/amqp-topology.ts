// Exchange and queue names and declarations of the AMQP transport.
import { EVENTS_EXCHANGE } from '@hwp/contracts';
import type * as amqp from 'amqplib';
import type { Subscription } from './amqp-subscription';
import { broadcastQueueNameOf, queueNameOf, type SubscribeOptions } from './bus';

/**
 * What a consumer's work queues (`<queue>`, `.retry`, `.dlq`) are: replicated quorum queues, or
 * classic ones for a broker without quorum queues. A queue cannot change type in place.
 */
export type QueueType = 'quorum' | 'classic';

export interface WorkQueueSettings {
  type: QueueType;
  /** Deliveries of a message before it is dead-lettered (the subscription's maxAttempts). */
  maxAttempts: number;
  /** `x-expires` (ephemeral environments only). */
  expiresMs?: number;
}

/** The script that re-creates a work queue family keeping its messages (docs/bus.md). */
export const QUEUE_MIGRATION_SCRIPT = 'queue-migration-cli.js';

/** The durable topic exchange every event goes through, `hwp.events` behind the namespace. */
export function exchangeNameOf(namespace: string): string {
  return `${namespace}${EVENTS_EXCHANGE}`;
}

/** `<serviceName>.<consumer>`, or `<serviceName>.<consumer>.<replicaId>` for a broadcast consumer. */
export function consumerQueueNameOf(
  namespace: string,
  serviceName: string,
  options: SubscribeOptions,
  replicaId: string,
): string {
  return `${namespace}${
    options.broadcast
      ? broadcastQueueNameOf(serviceName, options.consumer, replicaId)
      : queueNameOf(serviceName, options.consumer)
  }`;
}

/**
 * Arguments of a work queue family. On quorum queues the broker counts deliveries that end without a
 * verdict (the process died, the channel was lost, a message was requeued) and dead-letters a message
 * at its maxAttempts-th such delivery into `<queue>.dlq`; `at-least-once` dead-lettering (with
 * `reject-publish`, which it requires) keeps the message in its queue until the target confirmed it.
 * The retry queue dead-letters expired messages back to `<queue>` the same way.
 */
export function workQueueArguments(
  queue: string,
  settings: WorkQueueSettings,
): { main: Record<string, unknown>; retry: Record<string, unknown>; dlq: Record<string, unknown> } {
  const common: Record<string, unknown> = settings.expiresMs ? { 'x-expires': settings.expiresMs } : {};
  const backToMain = { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue };
  if (settings.type === 'classic') {
    return { main: { ...common }, retry: { ...common, ...backToMain }, dlq: { ...common } };
  }
  const quorum = { ...common, 'x-queue-type': 'quorum' };
  const safeDeadLetters = { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };
  return {
    main: {
      ...quorum,
      // The limit counts returns: maxAttempts - 1 of them means maxAttempts deliveries.
      'x-delivery-limit': Math.max(0, settings.maxAttempts - 1),
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': `${queue}.dlq`,
      ...safeDeadLetters,
    },
    retry: { ...quorum, ...backToMain, ...safeDeadLetters },
    dlq: quorum,
  };
}

/**
 * The broker refused to declare a work queue because one of that name exists with other arguments
 * (another type, another delivery limit): the service must not consume it as it is, and redeclaring
 * would fail again. The message names what differs and the procedure that fixes it.
 */
export class QueueMismatchError extends Error {
  constructor(
    readonly queue: string,
    /** The type the queue was found to have, when it is exactly what the other AMQP_QUEUE_TYPE declares. */
    readonly foundType: QueueType | null,
    summary: string,
    remedy: string,
  ) {
    super(`${summary}. ${remedy}`);
    this.name = 'QueueMismatchError';
  }
}

/** `inequivalent arg '<name>'` out of a PRECONDITION_FAILED channel error, or null for any other error. */
export function inequivalentArgument(error: unknown): { argument: string; detail: string } | null {
  const message = error instanceof Error ? error.message : '';
  const match = /PRECONDITION_FAILED - (inequivalent arg '([^']+)'[^"]*)/.exec(message);
  return match ? { argument: match[2], detail: match[1] } : null;
}

/** The operator's way out of a mismatch: the migration command for this very queue. */
export function migrationRemedy(sub: Subscription, settings: WorkQueueSettings): string {
  const patterns = sub.patterns.map((p) => ` --pattern '${p}'`).join('');
  const other = settings.type === 'quorum' ? 'classic' : 'quorum';
  return (
    `Stop every replica of this service, then move the messages into new ${settings.type} queues with ` +
    `\`node <@hwp/platform>/dist/bus/${QUEUE_MIGRATION_SCRIPT} --queue '${sub.queue}'${patterns} ` +
    `--max-attempts ${settings.maxAttempts}\` (same environment as the service; see docs/bus.md, ` +
    `"Moving work queues"), or set AMQP_QUEUE_TYPE=${other} to keep the queues as they are`
  );
}

/** Whether declaring `queue` with `args` succeeds, on a channel of its own (a refusal closes it). */
async function declares(
  openChannel: () => Promise<amqp.Channel>,
  queue: string,
  args: Record<string, unknown>,
): Promise<boolean> {
  const ch = await openChannel();
  ch.on('error', () => undefined);
  try {
    await ch.assertQueue(queue, { durable: true, arguments: args });
    await ch.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Declares the exchange, the subscription's queues and bindings, on `ch`. A work queue that exists with
 * other arguments fails with a QueueMismatchError; `openChannel` lets it say whether it is of the other type.
 */
export async function declareConsumerTopology(
  ch: amqp.ConfirmChannel,
  sub: Subscription,
  exchange: string,
  settings: WorkQueueSettings,
  openChannel?: () => Promise<amqp.Channel>,
): Promise<void> {
  await ch.assertExchange(exchange, 'topic', { durable: true });
  if (sub.broadcast) {
    // Tied to this connection: the broker deletes it when the process (or its connection) goes.
    await ch.assertQueue(sub.queue, { exclusive: true, autoDelete: true, durable: false });
  } else {
    // Expired retries return to the main queue through the default exchange. The delay is set per
    // message (`expiration`) rather than as x-message-ttl so a config change needs no queue redeclare.
    const args = workQueueArguments(sub.queue, settings);
    const other = settings.type === 'quorum' ? 'classic' : 'quorum';
    const previous = workQueueArguments(sub.queue, { ...settings, type: other });
    for (const [role, queue] of [
      ['main', sub.queue],
      ['retry', `${sub.queue}.retry`],
      ['dlq', `${sub.queue}.dlq`],
    ] as const) {
      try {
        await ch.assertQueue(queue, { durable: true, arguments: args[role] });
      } catch (error) {
        const mismatch = inequivalentArgument(error);
        if (!mismatch || !openChannel) throw error;
        // The broker names the first argument that differs, not the type: declaring the queue as the
        // other type would (a no-op on an existing queue) tells whether that is what it is.
        const isOther = await declares(openChannel, queue, previous[role]);
        const summary = isOther
          ? `queue ${queue} is a ${other} queue but this service declares ${settings.type} work queues (AMQP_QUEUE_TYPE=${settings.type})`
          : `queue ${queue} exists with other arguments than this service declares (broker: ${mismatch.detail})`;
        throw new QueueMismatchError(queue, isOther ? other : null, summary, migrationRemedy(sub, settings));
      }
    }
  }
  for (const pattern of sub.patterns) await ch.bindQueue(sub.queue, exchange, pattern);
}
