// Re-creating a consumer's work queues with other arguments (classic -> quorum) without losing a message.
import * as amqp from 'amqplib';
import {
  ATTEMPT_HEADER,
  appHeaders,
  ROUTING_KEY_HEADER,
  readAttempt,
  readDeliveryCount,
} from './amqp-headers';
import {
  exchangeNameOf,
  inequivalentArgument,
  type QueueType,
  type WorkQueueSettings,
  workQueueArguments,
} from './amqp-topology';
import { type BusLogger, silentLogger } from './logger';

export interface WorkQueueMigrationOptions {
  url: string;
  /** AMQP_NAMESPACE of the service: names the exchange. */
  namespace: string;
  /** The consumer's queue, namespace included: `<namespace><serviceName>.<consumer>`. */
  queue: string;
  /** The consumer's routing-key patterns, as the service binds them. */
  patterns: readonly string[];
  /** What the queues become: the service's AMQP_QUEUE_TYPE, maxAttempts and AMQP_QUEUE_EXPIRES_MS. */
  settings: WorkQueueSettings;
  logger?: BusLogger;
}

export interface WorkQueueMigrationReport {
  /** Queues of the family that were dropped and declared again. */
  recreated: string[];
  /** Messages moved out and back, per queue of the family. */
  moved: { main: number; retry: number; dlq: number };
}

/** Messages taken from a queue before their copies' confirms are awaited and they are acked. */
const MOVE_BATCH = 200;

/**
 * Re-creates `<queue>`, `<queue>.retry` and `<queue>.dlq` with the arguments the service declares when
 * they exist with others (a classic queue cannot become a quorum queue in place). Run it with the
 * service's consumers stopped; producers may go on publishing. Every step keeps each message in at
 * least one queue, and the whole can be run again after an interruption:
 *
 * 1. `<queue>.migrating` (and `<queue>.dlq.migrating`) is declared and bound like `<queue>`, so new
 *    events have somewhere to go while `<queue>` does not exist.
 * 2. The old retry queue is emptied into it first (its messages would otherwise expire into a
 *    `<queue>` that is about to go); then `<queue>` is unbound and emptied, then the dead letters.
 *    Each message is acked in the old queue only after the broker confirmed its copy.
 * 3. The emptied queues are deleted (only if empty) and declared with the new arguments, `<queue>`
 *    bound again.
 * 4. The holding queues are unbound and emptied into the new ones, then deleted.
 *
 * Between the new `<queue>`'s binding and the holding queue's unbinding an event is routed to both:
 * the consumers' inbox takes the second copy as the duplicate it is.
 */
export async function migrateWorkQueues(
  options: WorkQueueMigrationOptions,
): Promise<WorkQueueMigrationReport> {
  const { queue, patterns, settings } = options;
  const logger = options.logger ?? silentLogger;
  const exchange = exchangeNameOf(options.namespace);
  const args = workQueueArguments(queue, settings);
  const family = { main: queue, retry: `${queue}.retry`, dlq: `${queue}.dlq` };
  const holding = { main: `${queue}.migrating`, dlq: `${queue}.dlq.migrating` };
  const holdingArgs = settings.type === 'quorum' ? { 'x-queue-type': 'quorum' } : {};
  // What the queues being replaced are taken to be: the other type (only a classic queue is deleted `ifEmpty`).
  const previous: QueueType = settings.type === 'quorum' ? 'classic' : 'quorum';
  const report: WorkQueueMigrationReport = { recreated: [], moved: { main: 0, retry: 0, dlq: 0 } };

  const connection = await amqp.connect(options.url);
  connection.on('error', () => undefined);
  try {
    let channel = await connection.createConfirmChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const exists = (name: string) => probe(connection, (ch) => ch.checkQueue(name));
    const fits = (name: string, queueArguments: Record<string, unknown>) =>
      probe(connection, (ch) => ch.assertQueue(name, { durable: true, arguments: queueArguments }));
    const stale = {
      main: (await exists(family.main)) && !(await fits(family.main, args.main)),
      retry: (await exists(family.retry)) && !(await fits(family.retry, args.retry)),
      dlq: (await exists(family.dlq)) && !(await fits(family.dlq, args.dlq)),
    };
    const resuming = (await exists(holding.main)) || (await exists(holding.dlq));
    if (!stale.main && !stale.retry && !stale.dlq && !resuming) {
      logger.info({ queue }, 'work queues already have the declared arguments; nothing to move');
    }

    // 1. Somewhere for new events while the old queue is emptied and gone.
    if (stale.main || stale.retry || stale.dlq || resuming) {
      await channel.assertQueue(holding.main, { durable: true, arguments: holdingArgs });
      await channel.assertQueue(holding.dlq, { durable: true, arguments: holdingArgs });
      for (const pattern of patterns) await channel.bindQueue(holding.main, exchange, pattern);
    }
    // 2 and 3, the retry queue first: expired retries go back into `<queue>`, still there to take them.
    if (stale.retry) {
      report.moved.retry += await moveAll(channel, family.retry, holding.main);
      await deleteEmptied(channel, family.retry, holding.main, previous);
      report.recreated.push(family.retry);
    }
    if (stale.main) {
      for (const pattern of patterns) await channel.unbindQueue(family.main, exchange, pattern);
      report.moved.main += await moveAll(channel, family.main, holding.main);
      await deleteEmptied(channel, family.main, holding.main, previous);
      report.recreated.push(family.main);
    }
    if (stale.dlq) {
      report.moved.dlq += await moveAll(channel, family.dlq, holding.dlq);
      await deleteEmptied(channel, family.dlq, holding.dlq, previous);
      report.recreated.push(family.dlq);
    }
    await channel.assertQueue(family.main, { durable: true, arguments: args.main });
    await channel.assertQueue(family.retry, { durable: true, arguments: args.retry });
    await channel.assertQueue(family.dlq, { durable: true, arguments: args.dlq });
    for (const pattern of patterns) await channel.bindQueue(family.main, exchange, pattern);

    // 4. Back into the new queues; the holding queues go once empty. On a channel of its own: one that
    // used the deleted queues may still hold their (classic) state, and RabbitMQ 3.10 then fails a
    // publish to the new queue of that name with INTERNAL_ERROR, closing the connection.
    await channel.close();
    channel = await connection.createConfirmChannel();
    if (await exists(holding.main)) {
      for (const pattern of patterns) await channel.unbindQueue(holding.main, exchange, pattern);
      await moveAll(channel, holding.main, family.main);
      await deleteEmptied(channel, holding.main, family.main, settings.type);
    }
    if (await exists(holding.dlq)) {
      await moveAll(channel, holding.dlq, family.dlq);
      await deleteEmptied(channel, holding.dlq, family.dlq, settings.type);
    }
    await channel.close();
    logger.info({ queue, ...report }, 'work queues re-created; messages moved');
    return report;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Runs `check` on a channel of its own (a failed declare closes its channel): false on a refusal. */
async function probe(connection: amqp.ChannelModel, check: (ch: amqp.Channel) => Promise<unknown>) {
  const ch = await connection.createChannel();
  ch.on('error', () => undefined);
  try {
    await check(ch);
    await ch.close();
    return true;
  } catch (error) {
    // 404 (no such queue) or 406 (inequivalent arguments) close the channel; anything else is a real failure.
    const code = (error as { code?: unknown }).code;
    if (code === 404 || inequivalentArgument(error)) return false;
    throw error;
  }
}

/**
 * Moves every message of `from` into `to` through the default exchange: a batch is acked in `from`
 * once the broker has confirmed all its copies, so a failure leaves a message in one queue or both.
 */
async function moveAll(channel: amqp.ConfirmChannel, from: string, to: string): Promise<number> {
  let moved = 0;
  for (;;) {
    let last: amqp.GetMessage | false = false;
    let count = 0;
    for (; count < MOVE_BATCH; count++) {
      const message = await channel.get(from, { noAck: false });
      if (!message) break;
      channel.sendToQueue(to, message.content, movedProperties(message));
      last = message;
    }
    if (!last) return moved;
    await channel.waitForConfirms();
    channel.ack(last, true);
    moved += count;
  }
}

/**
 * Deletes an emptied queue; a message that reached it meanwhile is moved first (then it tries again).
 * Only a classic queue can be deleted `ifEmpty` (RabbitMQ 3.10 closes the connection with
 * INTERNAL_ERROR when asked so for a quorum queue); the queues deleted here get no new messages by then
 * (unbound, their service stopped), the check before is for the ones that came in while moving.
 */
async function deleteEmptied(
  channel: amqp.ConfirmChannel,
  queue: string,
  movedTo: string,
  type: QueueType,
): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const { messageCount } = await channel.checkQueue(queue);
    if (messageCount === 0) {
      await channel.deleteQueue(queue, type === 'classic' ? { ifEmpty: true } : {});
      return;
    }
    await moveAll(channel, queue, movedTo);
  }
  throw new Error(`${queue} keeps receiving messages; is a binding left that the patterns do not name?`);
}

/**
 * A moved message keeps its content, properties and application headers, with its routing key and
 * the deliveries it has used so far in our headers; not its `expiration`, which in a holding queue
 * would drop it (a waiting retry is delivered early instead), nor a `userId` the broker would check.
 */
function movedProperties(message: amqp.GetMessage): amqp.Options.Publish {
  const p = message.properties;
  const headers = appHeaders(p.headers);
  headers[ROUTING_KEY_HEADER] = originalKey(message);
  const spent = readDeliveryCount(p.headers);
  if (spent > 0) headers[ATTEMPT_HEADER] = readAttempt(p.headers) + spent;
  for (const key of ['x-death', 'x-first-death-queue', 'x-first-death-reason', 'x-first-death-exchange'])
    if (p.headers?.[key] !== undefined) headers[key] = p.headers[key];
  const props: amqp.Options.Publish = { persistent: true, headers };
  for (const key of [
    'contentType',
    'contentEncoding',
    'correlationId',
    'messageId',
    'type',
    'appId',
  ] as const)
    if (typeof p[key] === 'string') props[key] = p[key];
  if (typeof p.timestamp === 'number') props.timestamp = p.timestamp;
  if (typeof p.priority === 'number') props.priority = p.priority;
  return props;
}

/** The routing key it was published with: our header, the topic exchange's key, or the broker's x-death. */
function originalKey(message: amqp.GetMessage): string {
  const header: unknown = message.properties.headers?.[ROUTING_KEY_HEADER];
  if (typeof header === 'string') return header;
  if (message.fields.exchange !== '') return message.fields.routingKey;
  const deaths: unknown = message.properties.headers?.['x-death'];
  const first = Array.isArray(deaths) ? (deaths.at(-1) as { 'routing-keys'?: unknown }) : undefined;
  const keys = first?.['routing-keys'];
  return Array.isArray(keys) && typeof keys[0] === 'string' ? keys[0] : message.fields.routingKey;
}
