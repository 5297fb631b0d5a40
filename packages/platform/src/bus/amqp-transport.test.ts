import { EVENTS_EXCHANGE, type EventEnvelope } from '@hwp/contracts';
import type { DataSource } from 'typeorm';
import { newId } from '../ids';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import { AmqpTransport, ATTEMPT_HEADER, LAST_ERROR_HEADER, ROUTING_KEY_HEADER } from './amqp-transport';
import { queueNameOf, type SubscribeOptions } from './bus';
import { buildEnvelope } from './envelope';
import { subscribeWithInbox } from './inbox';
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

describe('AmqpTransport with outbox and inbox', () => {
  const suffix = uniqueSuffix();
  const serviceName = `bus-amqp-test-${suffix}`;
  const key = (name: string) => `test.amqp${suffix}.${name}.v1`;
  const queues: string[] = [];
  let db: TestDatabase;
  let dataSource: DataSource;
  let transport: AmqpTransport;
  let admin: Awaited<ReturnType<typeof openAdmin>>;

  beforeAll(async () => {
    db = await createTestDatabase('bus_amqp');
    dataSource = await openBusDatabase(db.url);
    transport = new AmqpTransport({
      url: TEST_AMQP_URL,
      serviceName,
      logger: recordingLogger(),
      maxAttempts: 3,
      retryDelayMs: 100,
    });
    await transport.start();
    admin = await openAdmin();
  });

  afterAll(async () => {
    await transport?.close();
    await admin?.deleteQueues(queues.flatMap(queueFamily));
    await admin?.close();
    await dataSource?.destroy();
    await db?.drop();
  });

  function subscribe(
    consumer: string,
    patterns: string[],
    handler: (event: EventEnvelope) => Promise<void>,
    options: Partial<SubscribeOptions> = {},
  ) {
    queues.push(queueNameOf(serviceName, consumer));
    return subscribeWithInbox(transport, dataSource, { ...options, consumer, patterns }, async (event) =>
      handler(event),
    );
  }

  it('reports its connection', async () => {
    expect(transport.kind).toBe('amqp');
    expect(transport.isConnected()).toBe(true);
    await expect(transport.ping()).resolves.toBeUndefined();
  });

  it('retries a failing message maxAttempts times, then parks it in the dead-letter queue', async () => {
    const queue = queueNameOf(serviceName, 'poison');
    const calls = new Map<string, number>();
    /** Event ids in the order the handler got them. */
    const order: string[] = [];
    // One message at a time, so the order of the handler calls is the order of the queue.
    const oneAtATime = { prefetch: 1 };
    await subscribe(
      'poison',
      [key('poison')],
      async (event) => {
        order.push(event.id);
        calls.set(event.id, (calls.get(event.id) ?? 0) + 1);
        if ((event.data as { poison?: boolean }).poison) throw new Error(`cannot digest ${event.id}`);
      },
      oneAtATime,
    );

    const poison = buildEnvelope({ type: key('poison'), actor: 'test', data: { poison: true } });
    const good = [1, 2, 3].map((n) => buildEnvelope({ type: key('poison'), actor: 'test', data: { n } }));
    // Written to the channel in one go: all four are queued, in this order, before the poison fails.
    await Promise.all([poison, ...good].map((envelope) => transport.publish(envelope)));

    await expectEventually(async () => {
      const { messageCount } = await admin.channel.checkQueue(`${queue}.dlq`);
      expect(messageCount).toBe(1);
    });
    expect(calls.get(poison.id)).toBe(3);
    for (const envelope of good) expect(calls.get(envelope.id)).toBe(1);
    // The poison message did not hold up the ones behind it: each retry went to the back of the queue.
    expect(order).toEqual([poison.id, ...good.map((envelope) => envelope.id), poison.id, poison.id]);

    await sleep(500);
    expect(calls.get(poison.id)).toBe(3);
    const dead = await admin.channel.get(`${queue}.dlq`, { noAck: true });
    if (!dead) throw new Error('dead-letter queue is empty');
    expect(JSON.parse(dead.content.toString())).toEqual(poison);
    expect(dead.properties.messageId).toBe(poison.id);
    expect(dead.properties.headers?.[ATTEMPT_HEADER]).toBe(3);
    expect(dead.properties.headers?.[LAST_ERROR_HEADER]).toBe(`cannot digest ${poison.id}`);
    expect(dead.properties.headers?.[ROUTING_KEY_HEADER]).toBe(key('poison'));
    // Rolled back with each failed attempt, so nothing says it was processed.
    expect(await dataSource.query('SELECT 1 FROM inbox WHERE event_id = $1', [poison.id])).toEqual([]);
    const { messageCount: left } = await admin.channel.checkQueue(queue);
    expect(left).toBe(0);
  });

  it('sends a message that is not an envelope straight to the dead-letter queue', async () => {
    const queue = queueNameOf(serviceName, 'malformed');
    let calls = 0;
    await subscribe('malformed', [key('malformed')], async () => {
      calls++;
    });
    admin.channel.publish(EVENTS_EXCHANGE, key('malformed'), Buffer.from('{not json'));
    admin.channel.publish(EVENTS_EXCHANGE, key('malformed'), Buffer.from(JSON.stringify({ hello: 'world' })));
    await expectEventually(async () => {
      const { messageCount } = await admin.channel.checkQueue(`${queue}.dlq`);
      expect(messageCount).toBe(2);
    });
    expect(calls).toBe(0);
    const first = await admin.channel.get(`${queue}.dlq`, { noAck: true });
    if (!first) throw new Error('dead-letter queue is empty');
    expect(first.content.toString()).toBe('{not json');
    expect(String(first.properties.headers?.[LAST_ERROR_HEADER])).toMatch(/not JSON/);
  });

  it('handles an envelope delivered twice only once', async () => {
    const handled: string[] = [];
    await subscribe('dedup', [key('dedup')], async (event) => {
      handled.push(event.id);
    });
    const envelope = buildEnvelope({ type: key('dedup'), actor: 'test', data: { n: 1 } });
    const other = buildEnvelope({ type: key('dedup'), actor: 'test', data: { n: 2 } });
    await transport.publish(envelope);
    await transport.publish(envelope);
    await transport.publish(other);
    await expectEventually(() => expect(handled).toContain(other.id));
    await sleep(500);
    expect(handled.filter((id) => id === envelope.id)).toHaveLength(1);
    const rows = await dataSource.query('SELECT consumer FROM inbox WHERE event_id = $1', [envelope.id]);
    expect(rows).toEqual([{ consumer: queueNameOf(serviceName, 'dedup') }]);
  });

  it('runs a handler again after it failed once (the inbox row was rolled back)', async () => {
    const calls: string[] = [];
    await subscribe('flaky', [key('flaky')], async (event) => {
      calls.push(event.id);
      if (calls.length === 1) throw new Error('transient');
    });
    const envelope = buildEnvelope({ type: key('flaky'), actor: 'test', data: {} });
    await transport.publish(envelope);
    await expectEventually(() => expect(calls).toEqual([envelope.id, envelope.id]));
    await sleep(300);
    expect(calls).toHaveLength(2);
    expect(await dataSource.query('SELECT 1 FROM inbox WHERE event_id = $1', [envelope.id])).toHaveLength(1);
  });

  it('publishes nothing when the business transaction rolls back', async () => {
    const received: EventEnvelope[] = [];
    await subscribe('rollback', [key('rollback')], async (event) => {
      received.push(event);
    });
    const outbox = new Outbox();
    const relay = new OutboxRelay({ dataSource, transport, intervalMs: 50 });
    relay.start();
    try {
      const doomed = newId();
      await expect(
        dataSource.transaction(async (manager) => {
          await manager.query('INSERT INTO widget (id, name) VALUES ($1, $2)', [doomed, 'doomed']);
          await outbox.add(manager, { type: key('rollback'), actor: 'test', data: { widgetId: doomed } });
          throw new Error('validation failed after the write');
        }),
      ).rejects.toThrow('validation failed');
      relay.nudge();

      // A committed event afterwards proves the pipeline is live, so silence above means something.
      const kept = newId();
      const envelope = await dataSource.transaction(async (manager) => {
        await manager.query('INSERT INTO widget (id, name) VALUES ($1, $2)', [kept, 'kept']);
        return outbox.add(manager, { type: key('rollback'), actor: 'test', data: { widgetId: kept } });
      });
      relay.nudge();
      await expectEventually(() => expect(received.map((e) => e.id)).toEqual([envelope.id]));
      await sleep(300);
      expect(received).toHaveLength(1);
      expect(await dataSource.query('SELECT id FROM widget WHERE id = $1', [doomed])).toEqual([]);
      const outboxRows = await dataSource.query(
        "SELECT id FROM outbox WHERE envelope->'data'->>'widgetId' = $1",
        [doomed],
      );
      expect(outboxRows).toEqual([]);
    } finally {
      await relay.stop();
    }
  });

  it('resubscribes when the broker cancels its consumer', async () => {
    const seen: string[] = [];
    await subscribe('cancelled', [key('cancelled')], async (event) => {
      seen.push(event.id);
    });
    // Deleting the queue makes the broker cancel the consumer; the transport declares it again.
    await admin.channel.deleteQueue(queueNameOf(serviceName, 'cancelled'));
    await expectEventually(
      async () => {
        // Until the queue is back a message has nowhere to go, so each try sends a fresh one.
        await transport.publish(buildEnvelope({ type: key('cancelled'), actor: 'test', data: {} }));
        await sleep(100);
        expect(seen.length).toBeGreaterThan(0);
      },
      { timeoutMs: 8000, intervalMs: 200 },
    );
    expect(transport.isConnected()).toBe(true);
  });

  it('rejects publish and ping at once after close', async () => {
    const other = new AmqpTransport({ url: TEST_AMQP_URL, serviceName: `${serviceName}-closing` });
    await other.start();
    await other.close();
    expect(other.isConnected()).toBe(false);
    const publishing = other.publish(buildEnvelope({ type: key('closed'), actor: 'test', data: {} }));
    expect(await settlesWithoutWaiting(publishing)).toBe(true);
    await expect(publishing).rejects.toThrow();
    const pinging = other.ping();
    expect(await settlesWithoutWaiting(pinging)).toBe(true);
    await expect(pinging).rejects.toThrow();
    await expect(other.close()).resolves.toBeUndefined();
  });
});
