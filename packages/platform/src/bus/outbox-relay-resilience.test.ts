import { Socket } from 'node:net';
import type { EventEnvelope } from '@hwp/contracts';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../db/data-source';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import { TcpProxy } from '../test-kit/tcp-proxy';
import type { MessageTransport } from './bus';
import { busEntities } from './entities';
import type { BusLogger } from './logger';
import { MemoryBroker } from './memory-transport';
import { Outbox } from './outbox';
import { OutboxRelay } from './outbox-relay';
import { openBusDatabase, recordingLogger } from './test-support';

/** A memory transport whose publish can be made to hang or fail a given number of times. */
function scriptedTransport(broker: MemoryBroker) {
  const inner = broker.transport('relay-svc');
  const script = { hangs: 0, failures: 0, calls: 0, at: [] as number[] };
  const transport: MessageTransport = {
    kind: 'memory',
    serviceName: inner.serviceName,
    start: () => inner.start(),
    subscribe: (options, handler) => inner.subscribe(options, handler),
    isConnected: () => inner.isConnected(),
    ping: () => inner.ping(),
    close: () => inner.close(),
    publish(envelope) {
      script.calls++;
      script.at.push(Date.now());
      if (script.hangs > 0) {
        script.hangs--;
        // A confirm that never comes.
        return new Promise<void>(() => {});
      }
      if (script.failures > 0) {
        script.failures--;
        throw new Error('broker refused');
      }
      return inner.publish(envelope);
    },
  };
  return { transport, script, inner };
}

const throwingLogger: BusLogger = {
  info: () => {
    throw new Error('log sink broken');
  },
  warn: () => {
    throw new Error('log sink broken');
  },
  error: () => {
    throw new Error('log sink broken');
  },
  debug: () => {
    throw new Error('log sink broken');
  },
};

describe('OutboxRelay under failures', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let broker: MemoryBroker;
  const outbox = new Outbox();

  beforeAll(async () => {
    db = await createTestDatabase('relay_fail');
    dataSource = await openBusDatabase(db.url);
  });

  beforeEach(async () => {
    broker = new MemoryBroker();
    await dataSource.query('TRUNCATE outbox, inbox');
  });

  afterEach(async () => {
    await broker.close();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  async function addEvents(count: number): Promise<EventEnvelope[]> {
    return dataSource.transaction(async (manager) => {
      const added: EventEnvelope[] = [];
      for (let i = 0; i < count; i++) {
        added.push(await outbox.add(manager, { type: 'relay.test.v1', actor: 'test', data: { i } }));
      }
      return added;
    });
  }

  /** Ids a consumer of the transport received, in order. */
  async function receiver(transport: MessageTransport): Promise<string[]> {
    const seen: string[] = [];
    await transport.subscribe({ consumer: 'sink', patterns: ['relay.#'] }, async (event) => {
      seen.push(event.id);
    });
    return seen;
  }

  it('polls an empty outbox with one statement a tick, and publishes what arrives', async () => {
    const { transport } = scriptedTransport(broker);
    const seen = await receiver(transport);
    // What goes to the database: the first byte of a frontend message names it (Q simple query, P parse).
    const port = Number(new URL(db.url).port || 5432);
    const sent: string[] = [];
    const write = Socket.prototype.write;
    const spy = jest.spyOn(Socket.prototype, 'write').mockImplementation(function (this: Socket, ...args) {
      const [chunk] = args;
      if (this.remotePort === port && Buffer.isBuffer(chunk) && (chunk[0] === 0x51 || chunk[0] === 0x50))
        sent.push(chunk.subarray(5).toString('utf8').replace(/\s+/g, ' '));
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    });
    const relay = new OutboxRelay({ dataSource, transport, intervalMs: 20 });
    try {
      relay.start();
      await new Promise((resolve) => setTimeout(resolve, 400));
      const idle = [...sent];
      // Every tick was one probe: no transaction opened, no row locked.
      expect(idle.length).toBeGreaterThanOrEqual(5);
      expect(idle.filter((q) => !q.includes('FROM outbox WHERE published_at IS NULL LIMIT 1'))).toEqual([]);
      const events = await addEvents(2);
      await expectEventually(() => expect(seen).toEqual(events.map((e) => e.id)));
    } finally {
      spy.mockRestore();
      await relay.stop();
    }
  });

  it('fails a batch whose query waits on a lock (statement_timeout) and publishes once the lock goes', async () => {
    const { transport } = scriptedTransport(broker);
    const seen = await receiver(transport);
    const logger = recordingLogger();
    const relay = new OutboxRelay({
      dataSource,
      transport,
      logger,
      intervalMs: 20,
      maxBackoffMs: 100,
      statementTimeoutMs: 200,
    });
    const events = await addEvents(3);
    const locker = new Client({ connectionString: db.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE');
    relay.start();
    try {
      await expectEventually(() =>
        expect(
          logger.entries.filter((e) => e.msg === 'outbox relay batch failed; will retry').length,
        ).toBeGreaterThanOrEqual(2),
      );
      expect(relay.status()).toMatchObject({
        running: true,
        lastError: expect.stringMatching(/statement timeout/),
      });
      expect(seen).toEqual([]);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    await expectEventually(() => expect(seen).toEqual(events.map((e) => e.id)));
    await expectEventually(() =>
      expect(relay.status()).toMatchObject({ consecutiveFailures: 0, lastError: null }),
    );
    await relay.stop();
  });

  it('gives up on a publish whose confirm never comes, logs the event id and publishes it on a later batch', async () => {
    const { transport, script } = scriptedTransport(broker);
    const seen = await receiver(transport);
    const logger = recordingLogger();
    const relay = new OutboxRelay({
      dataSource,
      transport,
      logger,
      intervalMs: 20,
      maxBackoffMs: 50,
      publishTimeoutMs: 150,
    });
    script.hangs = 1;
    const events = await addEvents(2);
    relay.start();
    await expectEventually(() => expect(seen).toEqual(events.map((e) => e.id)));
    await relay.stop();
    const failure = logger.entries.find((e) => e.msg === 'outbox publish failed; will retry');
    expect(failure?.obj).toMatchObject({ eventId: events[0].id, err: expect.stringMatching(/timed out/) });
    const [row] = await dataSource.query('SELECT attempts, last_error FROM outbox WHERE id = $1', [
      events[0].id,
    ]);
    expect(row).toEqual({ attempts: 2, last_error: null });
  });

  it('retries a publish the broker refused at least once a second, however often it was refused', async () => {
    const { transport, script } = scriptedTransport(broker);
    const seen = await receiver(transport);
    // The default 5 s cap would have let the sixth wait grow to 3.2 s (100 ms doubling per failure).
    const relay = new OutboxRelay({ dataSource, transport, intervalMs: 100 });
    script.failures = 6;
    const events = await addEvents(1);
    relay.start();
    await expectEventually(() => expect(seen).toEqual([events[0].id]), { timeoutMs: 15_000 });
    await relay.stop();
    const waits = script.at.slice(1).map((at, i) => at - script.at[i]);
    expect(waits).toHaveLength(6);
    expect(Math.max(...waits)).toBeLessThan(1_500);
  });

  it('keeps looping when every log call throws', async () => {
    const { transport, script } = scriptedTransport(broker);
    const seen = await receiver(transport);
    const relay = new OutboxRelay({
      dataSource,
      transport,
      logger: throwingLogger,
      intervalMs: 20,
      maxBackoffMs: 50,
    });
    script.failures = 3;
    const events = await addEvents(2);
    relay.start();
    // Failing publishes log warnings, the recovery logs info: both throw, neither ends the loop.
    await expectEventually(() => expect(seen).toEqual(events.map((e) => e.id)));
    const later = await addEvents(1);
    await expectEventually(() => expect(seen).toEqual([...events, ...later].map((e) => e.id)));
    expect(relay.isRunning()).toBe(true);
    await relay.stop();
  });

  it('abandons a batch whose database connection stops answering, then publishes each event once', async () => {
    const proxy = await TcpProxy.create({ host: '127.0.0.1', port: Number(new URL(db.url).port || 5432) });
    const relayDb = createDataSource({
      url: proxy.rewriteUrl(db.url),
      entities: busEntities,
      migrations: [],
      poolSize: 3,
    });
    await relayDb.initialize();
    const { transport, inner } = scriptedTransport(broker);
    const seen = await receiver(transport);
    const logger = recordingLogger();
    const relay = new OutboxRelay({
      dataSource: relayDb,
      transport,
      logger,
      intervalMs: 20,
      maxBackoffMs: 100,
      batchTimeoutMs: 500,
    });
    try {
      relay.start();
      const before = await addEvents(1);
      await expectEventually(() => expect(seen).toEqual(before.map((e) => e.id)));

      proxy.freeze();
      const during = await addEvents(3);
      await expectEventually(
        () =>
          expect(
            logger.entries.some((e) =>
              /outbox relay batch timed out/.test(String((e.obj as { err?: string }).err)),
            ),
          ).toBe(true),
        { timeoutMs: 15_000 },
      );
      expect(relay.isRunning()).toBe(true);

      proxy.thaw();
      await expectEventually(() => expect(seen).toEqual([...before, ...during].map((e) => e.id)), {
        timeoutMs: 20_000,
      });
      // A row is marked published after the broker confirmed it, so the receiver may see it first.
      await expectEventually(async () => {
        const unpublished = await dataSource.query(
          'SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL',
        );
        expect(unpublished).toEqual([{ n: 0 }]);
      });
      expect(seen).toEqual([...before, ...during].map((e) => e.id));
      expect(inner.isConnected()).toBe(true);
    } finally {
      await relay.stop();
      await relayDb.destroy().catch(() => {});
      await proxy.close();
    }
  }, 60_000);
});
