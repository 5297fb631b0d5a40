// Headers and properties a message carries through the retry and dead-letter queues.
import type * as amqp from 'amqplib';

/** Header with the 1-based number of the delivery a message is on. */
export const ATTEMPT_HEADER = 'x-hwp-attempt';
/** Routing key the message was originally published with (a retried message arrives with its queue's name). */
export const ROUTING_KEY_HEADER = 'x-hwp-routing-key';
export const LAST_ERROR_HEADER = 'x-hwp-last-error';
export const FAILED_AT_HEADER = 'x-hwp-failed-at';
export const SOURCE_QUEUE_HEADER = 'x-hwp-source-queue';
/** Set by a quorum queue on a message it delivers again. */
export const DELIVERY_COUNT_HEADER = 'x-delivery-count';

// amqplib refuses header tables above 64 KiB; an error message is never worth that much.
export const MAX_HEADER_ERROR = 4000;

export function readAttempt(headers: amqp.MessagePropertyHeaders | undefined): number {
  const raw: unknown = headers?.[ATTEMPT_HEADER];
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
  return Number.isInteger(value) && value >= 1 ? value : 1;
}

/**
 * Deliveries of this copy that ended without a verdict (process or channel gone, requeued): a quorum
 * queue's `x-delivery-count`; none on a classic queue, which does not count them.
 */
export function readDeliveryCount(headers: amqp.MessagePropertyHeaders | undefined): number {
  const raw: unknown = headers?.[DELIVERY_COUNT_HEADER];
  return typeof raw === 'number' && Number.isInteger(raw) && raw > 0 ? raw : 0;
}

/** Application headers of a delivery, without the broker's dead-lettering and delivery bookkeeping. */
export function appHeaders(headers: amqp.MessagePropertyHeaders | undefined): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key === 'x-death' || key.startsWith('x-first-death') || key.startsWith('x-last-death')) continue;
    if (key === DELIVERY_COUNT_HEADER) continue;
    result[key] = value;
  }
  return result;
}

export function originalRoutingKey(message: amqp.ConsumeMessage): string {
  const header: unknown = message.properties.headers?.[ROUTING_KEY_HEADER];
  return typeof header === 'string' ? header : message.fields.routingKey;
}

export function copiedProperties(message: amqp.ConsumeMessage): amqp.Options.Publish {
  const p = message.properties;
  const props: amqp.Options.Publish = { persistent: true };
  if (typeof p.contentType === 'string') props.contentType = p.contentType;
  if (typeof p.messageId === 'string') props.messageId = p.messageId;
  if (typeof p.type === 'string') props.type = p.type;
  if (typeof p.correlationId === 'string') props.correlationId = p.correlationId;
  if (typeof p.appId === 'string') props.appId = p.appId;
  if (typeof p.timestamp === 'number') props.timestamp = p.timestamp;
  return props;
}
