import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource } from 'typeorm';
import { newId } from '../ids';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import type { MessageTransport } from './bus';
import { createBus } from './create-bus';
import { silentLogger } from './logger';
import { MemoryBroker, type MemoryTransport } from './memory-transport';
import { Outbox } from './outbox';
import { OutboxRelay } from './outbox-relay';
import { openBusDatabase, sleep } from './test-support';

/** Delegates to a memory transport, with publish made slow, held or failing on demand. */
function controllable(inner: MemoryTransport) {
  const control = {
    failing: false,
    delayMs: 0,
    /** While set, publish waits for it: a batch held in flight for as long as a test needs. */
    hold: null as Promise<void> | null,
    /** Ids publish was called with, including the calls still waiting. */
    attempted: [] as string[],
    published: [] as string[],
  };
  const transport: MessageTransport = {
    kind: 'memory',
    serviceName: inner.serviceName,
    start: () => inner.start(),
    subscribe: (options, handler) => inner.subscribe(options, handler),
    isConnected: () => !control.failing,
    ping: () => inner.ping(),
    close: () => inner.close(),
    async publish(envelope) {
      control.attempted.push(envelope.id);
      if (control.hold) await control.hold;
      if (control.delayMs) await sleep(control.delayMs);
      if (control.failing) throw new Error('broker unreachable');
      control.published.push(envelope.id);
      await inner.publish(envelope);
    },
  };
  return { transport, control };
}

describe('createBus, outbox relay and inbox on the memory transport', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let broker: MemoryBroker;

  beforeAll(async () => {
    db = await createTestDatabase('bus_core');
    dataSource = await openBusDatabase(db.url);
  });

  beforeEach(async () => {
    broker = new MemoryBroker();
    await dataSource.query('TRUNCATE outbox, inbox, widget');
  });

  afterEach(async () => {
    await broker.close();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('carries an event from one service to another and nudges the relay after commit', async () => {
    const api = createBus({
      serviceName: 'api-service',
      dataSource,
      transport: broker.transport('api-service'),
      logger: silentLogger,
      relayIntervalMs: 60_000,
    });
    const collab = createBus({
      serviceName: 'collab-service',
      dataSource,
      transport: broker.transport('collab-service'),
      logger: silentLogger,
    });
    await api.start();
    await collab.start();
    const seen: { event: EventEnvelope; inTransaction: boolean }[] = [];
    await collab.subscribe({ consumer: 'widgets', patterns: ['widget.*.v1'] }, async (event, manager) => {
      await manager.query('INSERT INTO widget (id, name) VALUES ($1, $2)', [
        (event.data as { copyId: string }).copyId,
        'copy',
      ]);
      seen.push({ event, inTransaction: manager.queryRunner?.isTransactionActive === true });
    });

    const copyId = newId();
    const envelope = await api.transaction(async (manager) => {
      await manager.query('INSERT INTO widget (id, name) VALUES ($1, $2)', [newId(), 'original']);
      return api.outbox.add(manager, {
        type: 'widget.created.v1',
        actor: 'user-7',
        tenantId: 't1',
        data: { copyId },
      });
    });
    expect(envelope).toMatchObject({
      type: 'widget.created.v1',
      version: 1,
      actor: 'user-7',
      tenantId: 't1',
    });
    expect(envelope.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // The poll interval is a minute: only the nudge after commit can have published this. The limit
    // stays well below that minute, and far above what delivery takes on a busy machine.
    await expectEventually(() => expect(seen).toHaveLength(1), { timeoutMs: 20_000 });
    expect(seen[0]).toEqual({ event: envelope, inTransaction: true });
    expect(await dataSource.query('SELECT name FROM widget WHERE id = $1', [copyId])).toEqual([
      { name: 'copy' },
    ]);
    expect(await dataSource.query('SELECT consumer FROM inbox WHERE event_id = $1', [envelope.id])).toEqual([
      { consumer: 'collab-service.widgets' },
    ]);

    await api.close();
    await collab.close();
    expect(api.relay.isRunning()).toBe(false);
    expect(api.transport.isConnected()).toBe(false);
  });

  it('keeps the transactions its consumers hold at once under maxHandlerTransactions, all consumers together', async () => {
    const bus = createBus({
      serviceName: 'svc',
      dataSource,
      transport: broker.transport('svc'),
      logger: silentLogger,
      maxHandlerTransactions: 2,
    });
    await bus.start();
    let active = 0;
    let most = 0;
    const handled: string[] = [];
    const slow = async (event: EventEnvelope) => {
      active++;
      most = Math.max(most, active);
      await sleep(50);
      active--;
      handled.push(event.id);
    };
    // Two consumers, each taking ten at once: still two transactions at a time in all.
    await bus.subscribe({ consumer: 'a', patterns: ['load.*.v1'], prefetch: 10 }, slow);
    await bus.subscribeStaged(
      { consumer: 'b', patterns: ['load.*.v1'], prefetch: 10 },
      { prepare: async () => true, commit: slow },
    );
    await bus.transaction(async (manager) => {
      for (let i = 0; i < 10; i++)
        await bus.outbox.add(manager, { type: 'load.tick.v1', actor: 't', data: { i } });
    });
    await expectEventually(() => expect(handled).toHaveLength(20), { timeoutMs: 20_000 });
    expect(most).toBe(2);
    await bus.close();
  });

  it('skips a redelivered event and rolls back a failed handler with its inbox row', async () => {
    const transport = broker.transport('svc', { retryDelayMs: 10 });
    const bus = createBus({ serviceName: 'svc', dataSource, transport, logger: silentLogger });
    await bus.start();
    const calls: string[] = [];
    await bus.subscribe({ consumer: 'c', patterns: ['thing.#'] }, async (event, manager) => {
      calls.push(event.id);
      await manager.query('INSERT INTO widget (id, name) VALUES ($1, $2)', [newId(), 'side effect']);
      if (calls.length === 1) throw new Error('first try fails');
    });
    const envelope = await bus.transaction((manager) =>
      bus.outbox.add(manager, { type: 'thing.done.v1', actor: 'a', data: {} }),
    );
    await expectEventually(() => expect(calls).toHaveLength(2));
    await transport.publish(envelope);
    await sleep(100);
    expect(calls).toEqual([envelope.id, envelope.id]);
    // The failed attempt's side effect went with its rollback.
    expect(await dataSource.query('SELECT count(*)::int AS n FROM widget')).toEqual([{ n: 1 }]);
    await bus.close();
  });

  it('keeps rows while publishing fails, records why, and resumes in order', async () => {
    const { transport, control } = controllable(broker.transport('svc'));
    const received: string[] = [];
    await transport.subscribe({ consumer: 'c', patterns: ['#'] }, async (e) => {
      received.push(e.id);
    });
    control.failing = true;
    const relay = new OutboxRelay({ dataSource, transport, intervalMs: 20, maxBackoffMs: 100 });
    const outbox = new Outbox();
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const envelope = await dataSource.transaction((m) =>
        outbox.add(m, { type: 'a.b.v1', actor: 'a', data: { n } }),
      );
      ids.push(envelope.id);
    }
    relay.start();
    await expectEventually(async () => {
      const rows = await dataSource.query('SELECT attempts, last_error FROM outbox ORDER BY created_at, id');
      expect(rows[0].attempts).toBeGreaterThanOrEqual(3);
      expect(rows[0].last_error).toBe('broker unreachable');
      // A failure stops the batch: later rows wait behind the first.
      expect(rows[1].attempts).toBe(0);
    });
    expect(
      await dataSource.query('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL'),
    ).toEqual([{ n: 3 }]);

    control.failing = false;
    await expectEventually(() => expect(received).toEqual(ids));
    await relay.stop();
    expect(
      await dataSource.query('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL'),
    ).toEqual([{ n: 0 }]);
    expect(await relay.purgePublished(0)).toBe(3);
  });

  it('publishes every row exactly once with several relays on one database', async () => {
    const { transport, control } = controllable(broker.transport('svc'));
    control.delayMs = 2;
    const outbox = new Outbox();
    const ids = new Set<string>();
    await dataSource.transaction(async (manager) => {
      for (let n = 0; n < 60; n++)
        ids.add((await outbox.add(manager, { type: 'a.b.v1', actor: 'a', data: { n } })).id);
    });
    const relays = [1, 2, 3].map(
      () => new OutboxRelay({ dataSource, transport, intervalMs: 10, batchSize: 5 }),
    );
    for (const relay of relays) relay.start();
    await expectEventually(() => expect(control.published).toHaveLength(60), { timeoutMs: 10_000 });
    await Promise.all(relays.map((relay) => relay.stop()));
    expect(new Set(control.published)).toEqual(ids);
    expect(control.published).toHaveLength(60);
  });

  it('stop() waits for the batch in flight', async () => {
    const { transport, control } = controllable(broker.transport('svc'));
    let release = () => {};
    control.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const outbox = new Outbox();
    await dataSource.transaction((m) => outbox.add(m, { type: 'a.b.v1', actor: 'a', data: {} }));
    const relay = new OutboxRelay({ dataSource, transport, intervalMs: 10 });
    relay.start();
    // The batch is in flight once its publish has begun, and stays so until released.
    await expectEventually(() => expect(control.attempted).toHaveLength(1));
    let stopped = false;
    const stopping = relay.stop().then(() => {
      stopped = true;
    });
    await sleep(100);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(control.published).toHaveLength(1);
    expect(
      await dataSource.query('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NOT NULL'),
    ).toEqual([{ n: 1 }]);
  });

  it('refuses a routing key without a version', async () => {
    const outbox = new Outbox();
    await expect(
      dataSource.transaction((m) => outbox.add(m, { type: 'no.version', actor: 'a', data: {} })),
    ).rejects.toThrow(/version/);
  });
  it('subscribeTo hands typed events and dead-letters a payload its key does not promise, at once', async () => {
    const api = createBus({
      serviceName: 'api-service',
      dataSource,
      transport: broker.transport('api-service'),
      logger: silentLogger,
    });
    const collab = createBus({
      serviceName: 'collab-service',
      dataSource,
      transport: broker.transport('collab-service'),
      logger: silentLogger,
      maxAttempts: 5,
    });
    await api.start();
    await collab.start();
    const seen: string[][] = [];
    await collab.subscribeTo({ consumer: 'revocations', keys: ['session.revoked.v1'] }, async (event) => {
      // Typed by its key: no cast.
      seen.push(event.data.session_ids);
    });
    const send = (data: unknown) =>
      api.transaction((manager) =>
        api.outbox.add(manager, { type: 'session.revoked.v1', actor: 'system', data }),
      );
    await send({ session_ids: ['s1'], user_id: 'u1', exp: 1_900_000_000, reason: 'logout' });
    const bad = await send({ session_ids: 's2', user_id: 'u1', exp: 1_900_000_000, reason: 'logout' });
    await expectEventually(() => {
      expect(seen).toEqual([['s1']]);
      expect(broker.deadLetters('collab-service.revocations')).toEqual([
        expect.objectContaining({
          attempts: 1,
          error: expect.stringContaining('data.session_ids is missing or of the wrong kind'),
        }),
      ]);
    });
    expect(broker.deadLetters('collab-service.revocations')[0].envelope?.id).toBe(bad.id);
  });
});
