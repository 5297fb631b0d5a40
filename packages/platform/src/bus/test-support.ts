import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import type { DataSource } from 'typeorm';
import { createDataSource, openDatabase } from '../db/data-source';
import { CreateBusTables1763700000000 } from './1763700000000-create-bus-tables';
import { CreateDeadLetters1763700000003 } from './1763700000003-CreateDeadLetters';
import { busEntities } from './entities';
import type { BusLogger } from './logger';

/** Broker the integration tests use (guest/guest on this machine and in CI). */
export const TEST_AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A short random suffix so queues and routing keys of concurrent test runs never meet. */
export function uniqueSuffix(): string {
  return randomBytes(4).toString('hex');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Opens a DataSource on `url` with the bus tables migrated and a `widget` business table. */
export async function openBusDatabase(url: string): Promise<DataSource> {
  const dataSource = createDataSource({
    url,
    entities: busEntities,
    migrations: [CreateBusTables1763700000000, CreateDeadLetters1763700000003],
    poolSize: 5,
  });
  await openDatabase(dataSource);
  await dataSource.query('CREATE TABLE widget (id uuid PRIMARY KEY, name text NOT NULL)');
  return dataSource;
}

export interface LogEntry {
  level: 'info' | 'warn' | 'error' | 'debug';
  msg?: string;
  obj: object;
}

/** A logger that keeps what it is told, for assertions (and prints nothing). */
export function recordingLogger(): BusLogger & { entries: LogEntry[]; messages(): string[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: LogEntry['level']) =>
    (obj: object, msg?: string): void => {
      entries.push({ level, obj, msg });
    };
  return {
    entries,
    messages: () => entries.map((e) => e.msg ?? ''),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    debug: at('debug'),
  };
}

/** A direct connection for inspecting and cleaning up queues. */
export async function openAdmin(): Promise<{
  channel: amqp.Channel;
  deleteQueues(queues: string[]): Promise<void>;
  close(): Promise<void>;
}> {
  const connection = await amqp.connect(TEST_AMQP_URL);
  const channel = await connection.createChannel();
  return {
    channel,
    async deleteQueues(queues) {
      for (const queue of queues) await channel.deleteQueue(queue);
    },
    async close() {
      await channel.close().catch(() => {});
      await connection.close().catch(() => {});
    },
  };
}

/** `queue` with its retry and dead-letter companions. */
export function queueFamily(queue: string): string[] {
  return [queue, `${queue}.retry`, `${queue}.dlq`];
}

/**
 * Whether `promise` has settled before the event loop's next turn, i.e. without waiting for any I/O
 * or timer: how "fails at once" is checked without a clock.
 */
export function settlesWithoutWaiting(promise: Promise<unknown>): Promise<boolean> {
  const nextTurn = new Promise<boolean>((resolve) => setImmediate(() => resolve(false)));
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    nextTurn,
  ]);
}

/**
 * 'same arguments' when `queue` exists with exactly `args` (or was just created with them), else the
 * broker's refusal, e.g. `inequivalent arg 'x-queue-type'`: how a test tells a queue's type without the
 * management API.
 */
export async function declaredWith(queue: string, args: Record<string, unknown>): Promise<string> {
  const connection = await amqp.connect(TEST_AMQP_URL);
  try {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    await channel.assertQueue(queue, { durable: true, arguments: args });
    return 'same arguments';
  } catch (error) {
    return (error as Error).message;
  } finally {
    await connection.close().catch(() => undefined);
  }
}
