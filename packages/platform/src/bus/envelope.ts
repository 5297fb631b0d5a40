import { type EventEnvelope, versionOfRoutingKey } from '@hwp/contracts';
import { currentContext } from '../context';
import { newId } from '../ids';
import type { OutgoingEvent } from './bus';

/** Fills in id, version and occurredAt; throws when the routing key has no `.vN` suffix. */
export function buildEnvelope<TData>(event: OutgoingEvent<TData>): EventEnvelope<TData> {
  const envelope: EventEnvelope<TData> = {
    id: newId(),
    type: event.type,
    version: versionOfRoutingKey(event.type),
    occurredAt: new Date().toISOString(),
    actor: event.actor,
    data: event.data,
  };
  // Optional fields are left out rather than set to undefined so the JSON stays minimal.
  if (event.tenantId !== undefined) envelope.tenantId = event.tenantId;
  if (event.workspace !== undefined) envelope.workspace = event.workspace;
  if (event.correlationId !== undefined) envelope.correlationId = event.correlationId;
  const traceparent = event.traceparent ?? currentContext()?.traceparent;
  if (traceparent !== undefined) envelope.traceparent = traceparent;
  return envelope;
}

// The inbox and outbox key envelopes by a uuid column, so an envelope with another id could never be
// recorded and is treated as malformed.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

/** Structural check of a decoded message; anything else is poison and goes to the dead-letter queue. */
export function isEventEnvelope(value: unknown): value is EventEnvelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.id === 'string' &&
    UUID.test(v.id) &&
    typeof v.type === 'string' &&
    v.type.length > 0 &&
    typeof v.version === 'number' &&
    Number.isInteger(v.version) &&
    typeof v.occurredAt === 'string' &&
    typeof v.actor === 'string' &&
    'data' in v &&
    isOptionalString(v.tenantId) &&
    isOptionalString(v.workspace) &&
    isOptionalString(v.correlationId) &&
    isOptionalString(v.traceparent)
  );
}

export type DecodeResult = { ok: true; envelope: EventEnvelope } | { ok: false; reason: string };

/** Decodes a message body; never throws. */
export function decodeEnvelope(content: Buffer | string): DecodeResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof content === 'string' ? content : content.toString('utf8'));
  } catch (error) {
    return { ok: false, reason: `content is not JSON: ${(error as Error).message}` };
  }
  if (!isEventEnvelope(parsed)) return { ok: false, reason: 'content is not an event envelope' };
  return { ok: true, envelope: parsed };
}

/**
 * AMQP topic matching: words are separated by dots, `*` matches exactly one word and `#` zero or
 * more words.
 */
export function topicMatches(pattern: string, routingKey: string): boolean {
  return matchWords(pattern.split('.'), 0, routingKey.split('.'), 0);
}

function matchWords(pattern: string[], p: number, key: string[], k: number): boolean {
  if (p === pattern.length) return k === key.length;
  const word = pattern[p];
  if (word === '#') {
    // Try every possible number of swallowed words, including none.
    for (let skip = k; skip <= key.length; skip++) {
      if (matchWords(pattern, p + 1, key, skip)) return true;
    }
    return false;
  }
  if (k === key.length) return false;
  if (word !== '*' && word !== key[k]) return false;
  return matchWords(pattern, p + 1, key, k + 1);
}
