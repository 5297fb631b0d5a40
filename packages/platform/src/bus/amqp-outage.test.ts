import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource } from 'typeorm';
import { newId } from '../ids';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import { TcpProxy } from '../test-kit/tcp-proxy';
import { AmqpTransport } from './amqp-transport';
import { queueNameOf } from './bus';
import { buildEnvelope } from './envelope';
import { subscribeWithInbox } from './inbox';
import { silentLogger } from './logger';
import { Outbox } from './outbox';
import { OutboxRelay } from './outbox-relay';
import {
  openAdmin,
  openBusDatabase,
  queueFamily,
  recordingLogger,
  settlesWithoutWaiting,
  sleep,
  TEST_AMQP_URL,
  uniqueSuffix,
} from './test-support';

describe('outbox relay across a broker outage', () => {
  const suffix = uniqueSuffix();
  const routingKey = `test.outage${suffix}.created.v1`;
  const consumerService = `bus-outage-consumer-${suffix}`;
  const queue = queueNameOf(consumerService, 'widgets');
  const resubscriberService = `bus-outage-resub-${suffix}`;
  const resubscriberQueue = queueNameOf(resubscriberService, 'widgets');
  const producerLog = recordingLogger();

  let db: TestDatabase;
  let dataSource: DataSource;
  let proxy: TcpProxy;
  let producer: AmqpTransport;
  let consumer: AmqpTransport;
  let relay: OutboxRelay;
  const received: EventEnvelope[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('bus_outage');
    dataSource = await openBusDatabase(db.url);
    const target = new URL(TEST_AMQP_URL);
    proxy = await TcpProxy.create({ host: target.hostname, port: Number(target.port || 5672) });
    producer = new AmqpTransport({
      url: proxy.rewriteUrl(TEST_AMQP_URL),
      serviceName: `bus-outage-producer-${suffix}`,
      logger: producerLog,
      confirmTimeoutMs: 2000,
      reconnectInitialDelayMs: 100,
      reconnectMaxDelayMs: 400,
    });
    consumer = new AmqpTransport({ url: TEST_AMQP_URL, serviceName: consumerService, logger: silentLogger });
    await Promise.all([producer.start(), consumer.start()]);
    await subscribeWithInbox(
      consumer,
      dataSource,
      { consumer: 'widgets', patterns: [routingKey] },
      async (event) => {
        received.push(event);
      },
    );
    relay = new OutboxRelay({ dataSource, transport: producer, intervalMs: 100, maxBackoffMs: 400 });
    relay.start();
  });

  afterAll(async () => {
    await relay?.stop();
    await producer?.close();
    await consumer?.close();
    await proxy?.close();
    const admin = await openAdmin();
    await admin.deleteQueues([...queueFamily(queue), ...queueFamily(resubscriberQueue)]);
    await admin.close();
    await dataSource?.destroy();
    await db?.drop();
  });

  it('keeps the event in the outbox while the broker is away and delivers it once after', async () => {
    expect(producer.isConnected()).toBe(true);

    await proxy.stop();
    await expectEventually(() => expect(producer.isConnected()).toBe(false), { timeoutMs: 5000 });
    // A publish during the outage fails at once (no confirm timeout) instead of hanging the relay.
    const publishing = producer.publish(buildEnvelope({ type: routingKey, actor: 'test', data: {} }));
    expect(await settlesWithoutWaiting(publishing)).toBe(true);
    await expect(publishing).rejects.toThrow(/not connected/);
    await expect(producer.ping()).rejects.toThrow();

    const widgetId = newId();
    const outbox = new Outbox();
    const envelope = await dataSource.transaction(async (manager) => {
      await manager.query('INSERT INTO widget (id, name) VALUES ($1, $2)', [widgetId, 'sprocket']);
      return outbox.add(manager, { type: routingKey, actor: 'user-1', data: { widgetId } });
    });
    relay.nudge();

    // The relay keeps trying (and recording why it fails) without losing the row.
    await expectEventually(
      async () => {
        const [row] = await dataSource.query(
          'SELECT attempts, last_error, published_at FROM outbox WHERE id = $1',
          [envelope.id],
        );
        expect(row.published_at).toBeNull();
        expect(row.attempts).toBeGreaterThanOrEqual(2);
        expect(row.last_error).toMatch(/not connected/);
      },
      { timeoutMs: 5000 },
    );
    await sleep(300);
    expect(received).toEqual([]);

    await proxy.start();
    await producer.waitUntilConnected(10_000);
    await expectEventually(() => expect(received.map((e) => e.id)).toEqual([envelope.id]), {
      timeoutMs: 10_000,
    });
    expect(received[0]).toEqual(envelope);

    const [row] = await dataSource.query('SELECT published_at, last_error FROM outbox WHERE id = $1', [
      envelope.id,
    ]);
    expect(row.published_at).not.toBeNull();
    expect(row.last_error).toBeNull();

    // Long enough for a duplicate publish or redelivery to show up.
    await sleep(1000);
    expect(received).toHaveLength(1);
    const inbox = await dataSource.query('SELECT consumer FROM inbox WHERE event_id = $1', [envelope.id]);
    expect(inbox).toEqual([{ consumer: queue }]);
    expect(producerLog.messages()).toContain('amqp connection lost');
    expect(producerLog.messages()).toContain('amqp reconnected');
  });

  it('re-establishes subscriptions after a reconnect', async () => {
    const resubscriber = new AmqpTransport({
      url: proxy.rewriteUrl(TEST_AMQP_URL),
      serviceName: resubscriberService,
      reconnectInitialDelayMs: 100,
      reconnectMaxDelayMs: 400,
    });
    try {
      await resubscriber.start();
      const seen: string[] = [];
      const resubKey = `test.outage${suffix}.resubscribed.v1`;
      await subscribeWithInbox(
        resubscriber,
        dataSource,
        { consumer: 'widgets', patterns: [resubKey] },
        async (e) => {
          seen.push(e.id);
        },
      );

      await proxy.stop();
      await expectEventually(() => expect(resubscriber.isConnected()).toBe(false), { timeoutMs: 5000 });
      // Published on the direct connection: it waits in the durable queue while its consumer is cut off.
      const envelope = buildEnvelope({ type: resubKey, actor: 'test', data: {} });
      await consumer.publish(envelope);
      await sleep(300);
      expect(seen).toEqual([]);

      await proxy.start();
      await expectEventually(() => expect(seen).toEqual([envelope.id]), { timeoutMs: 10_000 });
    } finally {
      await resubscriber.close();
    }
  });

  it('starts while the broker is down and connects, with its subscriptions, once it is up', async () => {
    const lateService = `bus-outage-late-${suffix}`;
    await proxy.stop();
    const late = new AmqpTransport({
      url: proxy.rewriteUrl(TEST_AMQP_URL),
      serviceName: lateService,
      startTimeoutMs: 300,
      reconnectInitialDelayMs: 100,
      reconnectMaxDelayMs: 400,
    });
    try {
      // start() returns although the broker stays down until after it (it would hang otherwise).
      await late.start();
      expect(late.isConnected()).toBe(false);
      const seen: string[] = [];
      const lateKey = `test.outage${suffix}.late.v1`;
      await subscribeWithInbox(late, dataSource, { consumer: 'widgets', patterns: [lateKey] }, async (e) => {
        seen.push(e.id);
      });

      await proxy.start();
      await late.waitUntilConnected(10_000);
      // The queue is declared on connect; publish once it exists so the message has somewhere to go.
      await expectEventually(async () => {
        const admin = await openAdmin();
        try {
          expect((await admin.channel.checkQueue(queueNameOf(lateService, 'widgets'))).consumerCount).toBe(1);
        } finally {
          await admin.close();
        }
      });
      const envelope = buildEnvelope({ type: lateKey, actor: 'test', data: {} });
      await late.publish(envelope);
      await expectEventually(() => expect(seen).toEqual([envelope.id]));
    } finally {
      await late.close();
      const admin = await openAdmin();
      await admin.deleteQueues(queueFamily(queueNameOf(lateService, 'widgets')));
      await admin.close();
    }
  });
});
