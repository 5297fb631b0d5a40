import type { EventEnvelope } from '@hwp/contracts';
import type * as amqp from 'amqplib';
import { withDeadline } from './timeouts';

/** Sends with a confirm callback and waits for the confirm, at most `timeoutMs`. */
export function confirmed(
  send: (done: (error: unknown) => void) => void,
  what: string,
  timeoutMs: number,
): Promise<void> {
  return withDeadline(
    new Promise<void>((resolve, reject) => {
      try {
        send((error) => {
          if (error)
            reject(error instanceof Error ? error : new Error(`${what} was not confirmed by the broker`));
          else resolve();
        });
      } catch (error) {
        // amqplib throws synchronously when the channel is already closed.
        reject(error);
      }
    }),
    timeoutMs,
    `confirm of ${what}`,
  );
}

/** Publishes an event on the topic exchange, persistent, and waits for the broker's confirm. */
export function publishEnvelope(
  channel: amqp.ConfirmChannel,
  exchange: string,
  appId: string,
  envelope: EventEnvelope,
  confirmTimeoutMs: number,
): Promise<void> {
  return confirmed(
    (done) =>
      channel.publish(
        exchange,
        envelope.type,
        Buffer.from(JSON.stringify(envelope)),
        {
          persistent: true,
          contentType: 'application/json',
          messageId: envelope.id,
          type: envelope.type,
          correlationId: envelope.correlationId,
          // For broker-side tools; consumers read the envelope's copy.
          headers: envelope.traceparent ? { traceparent: envelope.traceparent } : undefined,
          appId,
          timestamp: Math.floor(Date.parse(envelope.occurredAt) / 1000) || undefined,
        },
        done,
      ),
    `publish of ${envelope.type} ${envelope.id}`,
    confirmTimeoutMs,
  );
}
