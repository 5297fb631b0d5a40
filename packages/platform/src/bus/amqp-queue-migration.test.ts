import type { EventEnvelope } from '@hwp/contracts';
import * as amqp from 'amqplib';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import { ATTEMPT_HEADER, ROUTING_KEY_HEADER } from './amqp-headers';
import { QueueMismatchError, workQueueArguments } from './amqp-topology';
import { AmqpTransport } from './amqp-transport';
import { buildEnvelope } from './envelope';
import { subscribeWithInbox } from './inbox';
import { runQueueMigration } from './queue-migration-cli';
import {
  declaredWith,
  openBusDatabase,
  queueFamily,
  recordingLogger,
  sleep,
  TEST_AMQP_URL,
  uniqueSuffix,
} from './test-support';

describe('moving classic work queues to quorum queues (docs/bus.md)', () => {
  const suffix = uniqueSuffix();
  const namespace = `test-${suffix}.`;
  const exchange = `${namespace}hwp.events`;
  const serviceName = `bus-migrate-${suffix}`;
  const queue = `${namespace}${serviceName}.work`;
  const key = `test.migrate${suffix}.work.v1`;
  const expiresMs = 300_000;
  const env = {
    AMQP_URL: TEST_AMQP_URL,
    AMQP_NAMESPACE: namespace,
    AMQP_QUEUE_EXPIRES_MS: String(expiresMs),
  };
  let db: TestDatabase;
  let dataSource: DataSource;
  let admin: amqp.ChannelModel;
  let channel: amqp.ConfirmChannel;
  let transport: AmqpTransport | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('bus_migrate');
    dataSource = await openBusDatabase(db.url);
    admin = await amqp.connect(TEST_AMQP_URL);
    channel = await admin.createConfirmChannel();
  });

  afterAll(async () => {
    await transport?.close();
    for (const name of [...queueFamily(queue), `${queue}.migrating`, `${queue}.dlq.migrating`])
      await channel?.deleteQueue(name).catch(() => undefined);
    await channel?.deleteExchange(exchange).catch(() => undefined);
    await admin?.close().catch(() => undefined);
    await dataSource?.destroy();
    await db?.drop();
  });

  async function exists(name: string): Promise<boolean> {
    const probe = await admin.createChannel();
    probe.on('error', () => undefined);
    try {
      await probe.checkQueue(name);
      await probe.close();
      return true;
    } catch {
      return false;
    }
  }

  const publish = (envelope: EventEnvelope) => {
    channel.publish(exchange, envelope.type, Buffer.from(JSON.stringify(envelope)), {
      persistent: true,
      messageId: envelope.id,
    });
    return channel.waitForConfirms();
  };

  it('moves every waiting, retrying and dead message into quorum queues the service then consumes', async () => {
    // The queues as the previous version declared them: classic, with messages in each.
    await channel.assertExchange(exchange, 'topic', { durable: true });
    await channel.assertQueue(queue, { durable: true, arguments: { 'x-expires': expiresMs } });
    await channel.assertQueue(`${queue}.retry`, {
      durable: true,
      arguments: { 'x-expires': expiresMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue },
    });
    await channel.assertQueue(`${queue}.dlq`, { durable: true, arguments: { 'x-expires': expiresMs } });
    await channel.bindQueue(queue, exchange, key);
    const waiting = Array.from({ length: 40 }, (_, n) =>
      buildEnvelope({ type: key, actor: 'test', data: { n } }),
    );
    for (const envelope of waiting) await publish(envelope);
    // Retries due in ten minutes, on their second attempt.
    const retrying = Array.from({ length: 5 }, (_, n) =>
      buildEnvelope({ type: key, actor: 'test', data: { n } }),
    );
    for (const envelope of retrying) {
      channel.sendToQueue(`${queue}.retry`, Buffer.from(JSON.stringify(envelope)), {
        persistent: true,
        expiration: '600000',
        headers: { [ATTEMPT_HEADER]: 2, [ROUTING_KEY_HEADER]: key },
      });
    }
    const dead = Array.from({ length: 3 }, (_, n) =>
      buildEnvelope({ type: key, actor: 'test', data: { n } }),
    );
    for (const envelope of dead)
      channel.sendToQueue(`${queue}.dlq`, Buffer.from(JSON.stringify(envelope)), { persistent: true });
    await channel.waitForConfirms();

    // The new version finds the classic queue: it refuses, naming the queue and the procedure.
    const handled: string[] = [];
    transport = new AmqpTransport({
      url: TEST_AMQP_URL,
      serviceName,
      namespace,
      queueExpiresMs: expiresMs,
      maxAttempts: 3,
      logger: recordingLogger(),
    });
    await transport.start();
    const consume = () =>
      subscribeWithInbox(
        transport as AmqpTransport,
        dataSource,
        { consumer: 'work', patterns: [key] },
        async (e) => {
          handled.push(e.id);
        },
      );
    const refusal = await consume().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(QueueMismatchError);
    expect((refusal as Error).message).toContain(
      `queue ${queue} is a classic queue but this service declares quorum work queues`,
    );
    expect((refusal as Error).message).toContain(
      `queue-migration-cli.js --queue '${queue}' --pattern '${key}' --max-attempts 3`,
    );
    expect((refusal as Error).message).toContain('AMQP_QUEUE_TYPE=classic');
    // Nothing was touched meanwhile.
    expect((await channel.checkQueue(queue)).messageCount).toBe(40);

    // Producers go on publishing while the operator runs the procedure.
    const during: string[] = [];
    let migrating = true;
    const producing = (async () => {
      while (migrating) {
        const envelope = buildEnvelope({ type: key, actor: 'test', data: { during: true } });
        await publish(envelope);
        during.push(envelope.id);
        await sleep(2);
      }
    })();
    const report = await runQueueMigration(
      ['--queue', queue, '--pattern', key, '--max-attempts', '3'],
      env,
    ).finally(() => {
      migrating = false;
    });
    await producing;
    expect(report.recreated.sort()).toEqual([queue, `${queue}.dlq`, `${queue}.retry`].sort());
    expect(report.moved.retry).toBe(5);
    expect(report.moved.dlq).toBe(3);
    expect(report.moved.main).toBeGreaterThanOrEqual(40);
    expect(during.length).toBeGreaterThan(0);

    // Quorum queues now, with exactly the arguments the service declares; no holding queue left.
    const args = workQueueArguments(queue, { type: 'quorum', maxAttempts: 3, expiresMs });
    expect(await declaredWith(queue, args.main)).toBe('same arguments');
    expect(await declaredWith(`${queue}.retry`, args.retry)).toBe('same arguments');
    expect(await declaredWith(`${queue}.dlq`, args.dlq)).toBe('same arguments');
    for (const holding of [`${queue}.migrating`, `${queue}.dlq.migrating`])
      expect(await exists(holding)).toBe(false);

    // The service starts and handles every event exactly once; the dead letters are still dead.
    await consume();
    const expected = [...waiting, ...retrying].map((e) => e.id).concat(during);
    await expectEventually(() => expect(new Set(handled)).toEqual(new Set(expected)), { timeoutMs: 20_000 });
    await sleep(500);
    expect(handled).toHaveLength(expected.length);
    expect((await channel.checkQueue(`${queue}.dlq`)).messageCount).toBe(3);
    const first = await channel.get(`${queue}.dlq`, { noAck: false });
    if (!first) throw new Error('dead-letter queue is empty');
    expect(dead.map((e) => e.id)).toContain(JSON.parse(first.content.toString()).id);
    channel.nack(first, false, true);
  }, 60_000);

  it('does nothing when run again', async () => {
    const report = await runQueueMigration(['--queue', queue, '--pattern', key, '--max-attempts', '3'], env);
    expect(report).toEqual({ recreated: [], moved: { main: 0, retry: 0, dlq: 0 } });
  });
});
