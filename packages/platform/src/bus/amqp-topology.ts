// Exchange and queue names and declarations of the AMQP transport.
import { EVENTS_EXCHANGE } from '@hwp/contracts';
import type * as amqp from 'amqplib';
import type { Subscription } from './amqp-subscription';
import { broadcastQueueNameOf, queueNameOf, type SubscribeOptions } from './bus';

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

/** Declares the exchange, the subscription's queues and bindings, on `ch`. */
export async function declareConsumerTopology(
  ch: amqp.ConfirmChannel,
  sub: Subscription,
  exchange: string,
  queueArguments: Record<string, unknown>,
): Promise<void> {
  await ch.assertExchange(exchange, 'topic', { durable: true });
  if (sub.broadcast) {
    // Tied to this connection: the broker deletes it when the process (or its connection) goes.
    await ch.assertQueue(sub.queue, { exclusive: true, autoDelete: true, durable: false });
  } else {
    await ch.assertQueue(sub.queue, { durable: true, arguments: queueArguments });
    // Expired retries return to the main queue through the default exchange. The delay is set per
    // message (`expiration`) rather than as x-message-ttl so a config change needs no queue redeclare.
    await ch.assertQueue(`${sub.queue}.retry`, {
      durable: true,
      deadLetterExchange: '',
      deadLetterRoutingKey: sub.queue,
      arguments: queueArguments,
    });
    await ch.assertQueue(`${sub.queue}.dlq`, { durable: true, arguments: queueArguments });
  }
  for (const pattern of sub.patterns) await ch.bindQueue(sub.queue, exchange, pattern);
}
