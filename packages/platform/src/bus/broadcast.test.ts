import * as amqp from 'amqplib';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import { AmqpTransport } from './amqp-transport';
import { broadcastQueueNameOf, queueNameOf, RecentIds } from './bus';
import { buildEnvelope } from './envelope';
import { subscribeWithInbox } from './inbox';
import { MemoryBroker } from './memory-transport';
import {
  openAdmin,
  openBusDatabase,
  queueFamily,
  recordingLogger,
  sleep,
  TEST_AMQP_URL,
  uniqueSuffix,
} from './test-support';

const envelope = (type: string, data: unknown = {}) => buildEnvelope({ type, actor: 'test', data });

describe('RecentIds', () => {
  it('forgets the oldest ids beyond its capacity', () => {
    const ids = new RecentIds(2);
    ids.add('a');
    ids.add('b');
    ids.add('c');
    expect([ids.has('a'), ids.has('b'), ids.has('c')]).toEqual([false, true, true]);
  });
});

describe('broadcast subscriptions on the memory transport', () => {
  let broker: MemoryBroker;
  beforeEach(() => {
    broker = new MemoryBroker();
  });
  afterEach(() => broker.close());

  it('hands every message to every replica of a service, beside a shared work queue', async () => {
    const replicas = [broker.transport('svc'), broker.transport('svc')];
    const local: string[][] = [[], []];
    const shared: string[] = [];
    for (const [i, transport] of replicas.entries()) {
      await transport.subscribe({ consumer: 'sse', patterns: ['collab.#'], broadcast: true }, async (e) => {
        local[i].push(e.id);
      });
      await transport.subscribe({ consumer: 'work', patterns: ['collab.#'] }, async (e) => {
        shared.push(e.id);
      });
    }
    const sent = [envelope('collab.event.v1'), envelope('collab.event.v1')];
    for (const e of sent) await replicas[0].publish(e);

    const ids = sent.map((e) => e.id);
    await expectEventually(() => expect(local).toEqual([ids, ids]));
    await expectEventually(() => expect(shared.sort()).toEqual([...ids].sort()));
    expect(broker.queueNames().sort()).toEqual(
      [
        'svc.work',
        broadcastQueueNameOf('svc', 'sse', replicas[0].replicaId),
        broadcastQueueNameOf('svc', 'sse', replicas[1].replicaId),
      ].sort(),
    );

    // A replica that stops takes its queue with it; the shared queue stays.
    await replicas[1].close();
    expect(broker.queueNames().sort()).toEqual(
      ['svc.work', broadcastQueueNameOf('svc', 'sse', replicas[0].replicaId)].sort(),
    );
  });

  it('retries a failing broadcast handler, then drops the message without dead-lettering it', async () => {
    const transport = broker.transport('svc', { maxAttempts: 3, retryDelayMs: 5 });
    let calls = 0;
    await transport.subscribe({ consumer: 'sse', patterns: ['#'], broadcast: true }, async () => {
      calls++;
      throw new Error('no client wants it');
    });
    await transport.publish(envelope('x.y.v1'));
    await expectEventually(() => expect(calls).toBe(3));
    await sleep(50);
    expect(calls).toBe(3);
    expect(broker.deadLetters(broadcastQueueNameOf('svc', 'sse', transport.replicaId))).toEqual([]);
  });
});

describe('broadcast subscriptions on RabbitMQ', () => {
  const suffix = uniqueSuffix();
  const serviceName = `bus-broadcast-test-${suffix}`;
  const namespace = `test-${suffix}.`;
  const key = (name: string) => `test.broadcast${suffix}.${name}.v1`;
  let db: TestDatabase;
  let dataSource: DataSource;
  let admin: Awaited<ReturnType<typeof openAdmin>>;
  const transports: AmqpTransport[] = [];

  async function replica(replicaId?: string): Promise<AmqpTransport> {
    const transport = new AmqpTransport({
      url: TEST_AMQP_URL,
      serviceName,
      namespace,
      logger: recordingLogger(),
      maxAttempts: 3,
      retryDelayMs: 20,
      queueExpiresMs: 60_000,
      replicaId,
    });
    await transport.start();
    transports.push(transport);
    return transport;
  }

  /**
   * Whether a queue exists, on a throwaway connection: a failed check closes its channel, and another
   * connection's exclusive queue answers 405 (RESOURCE_LOCKED) rather than its counts.
   */
  async function queueExists(queue: string): Promise<boolean> {
    const connection = await amqp.connect(TEST_AMQP_URL);
    connection.on('error', () => {});
    try {
      const channel = await connection.createChannel();
      channel.on('error', () => {});
      await channel.checkQueue(queue);
      return true;
    } catch (error) {
      return (error as { code?: number }).code !== 404;
    } finally {
      await connection.close().catch(() => {});
    }
  }

  beforeAll(async () => {
    db = await createTestDatabase('bus_broadcast');
    dataSource = await openBusDatabase(db.url);
    admin = await openAdmin();
  });

  afterAll(async () => {
    for (const transport of transports) await transport.close();
    await admin?.deleteQueues(queueFamily(`${namespace}${queueNameOf(serviceName, 'work')}`));
    await admin?.channel.deleteExchange(`${namespace}hwp.events`).catch(() => {});
    await admin?.close();
    await dataSource?.destroy();
    await db?.drop();
  });

  it('delivers each message to both processes of one service, and writes no inbox rows', async () => {
    const [a, b] = [await replica(), await replica()];
    expect(a.replicaId).not.toBe(b.replicaId);
    const got = new Map<string, string[]>([
      [a.replicaId, []],
      [b.replicaId, []],
    ]);
    const work: string[] = [];
    for (const transport of [a, b]) {
      await subscribeWithInbox(
        transport,
        dataSource,
        { consumer: 'sse', patterns: [key('event')], broadcast: true },
        async (event, manager) => {
          // Outside a transaction: the handler only does process-local work.
          expect(manager.queryRunner).toBeUndefined();
          got.get(transport.replicaId)?.push(event.id);
        },
      );
      await subscribeWithInbox(
        transport,
        dataSource,
        { consumer: 'work', patterns: [key('event')] },
        async (e) => {
          work.push(e.id);
        },
      );
    }
    for (const transport of [a, b]) {
      expect(await queueExists(`${namespace}${serviceName}.sse.${transport.replicaId}`)).toBe(true);
    }

    const sent = [1, 2, 3].map((n) => envelope(key('event'), { n }));
    for (const e of sent) await a.publish(e);
    const ids = sent.map((e) => e.id);
    await expectEventually(() => {
      expect(got.get(a.replicaId)).toEqual(ids);
      expect(got.get(b.replicaId)).toEqual(ids);
    });
    // The durable consumer beside it still shares its queue: each message handled once in all.
    await expectEventually(() => expect(work.sort()).toEqual([...ids].sort()));
    const inbox: { consumer: string }[] = await dataSource.query(
      'SELECT consumer FROM inbox WHERE event_id = ANY($1)',
      [ids],
    );
    expect(inbox.map((r) => r.consumer)).toEqual(ids.map(() => queueNameOf(serviceName, 'work')));

    // The queue is the process's own: it goes with the connection.
    const queue = `${namespace}${serviceName}.sse.${b.replicaId}`;
    await b.close();
    await expectEventually(async () => expect(await queueExists(queue)).toBe(false));
  });

  it('skips a redelivered id and drops a message whose handler keeps failing (no dead-letter queue)', async () => {
    const transport = await replica();
    const calls = new Map<string, number>();
    await transport.subscribe({ consumer: 'flaky', patterns: [key('flaky')], broadcast: true }, async (e) => {
      calls.set(e.id, (calls.get(e.id) ?? 0) + 1);
      if ((e.data as { fail?: boolean }).fail) throw new Error('cannot push');
    });
    const twice = envelope(key('flaky'));
    const failing = envelope(key('flaky'), { fail: true });
    const after = envelope(key('flaky'));
    await transport.publish(twice);
    await transport.publish(twice);
    await transport.publish(failing);
    await transport.publish(after);
    await expectEventually(() => {
      expect(calls.get(after.id)).toBe(1);
      expect(calls.get(failing.id)).toBe(3);
    });
    await sleep(200);
    expect(calls.get(twice.id)).toBe(1);
    expect(calls.get(failing.id)).toBe(3);
    const queue = `${namespace}${serviceName}.flaky.${transport.replicaId}`;
    expect(await queueExists(`${queue}.dlq`)).toBe(false);
    expect(await queueExists(`${queue}.retry`)).toBe(false);
  });

  it('names the queue after a replica id given in the options', async () => {
    const transport = await replica(`fixed${suffix}`);
    await transport.subscribe(
      { consumer: 'named', patterns: [key('named')], broadcast: true },
      async () => {},
    );
    expect(await queueExists(`${namespace}${serviceName}.named.fixed${suffix}`)).toBe(true);
  });
});
