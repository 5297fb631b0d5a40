import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import { deadLetterTable } from './dead-letter-sink';
import { buildEnvelope } from './envelope';
import type { BusLogger } from './logger';
import { MemoryBroker } from './memory-transport';
import { openBusDatabase, recordingLogger, sleep } from './test-support';

const envelope = (data: unknown = {}) => buildEnvelope({ type: 'job.run.v1', actor: 'test', data });

function breakable<T>() {
  let release!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe('memory transport consumers under failures', () => {
  let broker: MemoryBroker;

  beforeEach(() => {
    broker = new MemoryBroker();
  });

  afterEach(async () => {
    await broker.close();
  });

  it('retries a handler that throws synchronously', async () => {
    const transport = broker.transport('svc', { retryDelayMs: 10 });
    const done: string[] = [];
    let calls = 0;
    const handler = ((event: EventEnvelope) => {
      calls++;
      if (calls === 1) throw new Error('thrown before any promise');
      done.push(event.id);
      return Promise.resolve();
    }) as (event: EventEnvelope) => Promise<void>;
    await transport.subscribe({ consumer: 'sync', patterns: ['job.#'] }, handler);
    const sent = envelope();
    await transport.publish(sent);
    await expectEventually(() => expect(done).toEqual([sent.id]));
    expect(calls).toBe(2);
  });

  it('times out a handler that never answers, frees its slot and retries the message', async () => {
    const logger = recordingLogger();
    const transport = broker.transport('svc', { retryDelayMs: 10, handlerTimeoutMs: 100, logger });
    const done: number[] = [];
    let hung = false;
    await transport.subscribe({ consumer: 'hang', patterns: ['job.#'], prefetch: 1 }, async (event) => {
      const n = (event.data as { n: number }).n;
      if (n === 1 && !hung) {
        hung = true;
        return new Promise<void>(() => {});
      }
      done.push(n);
    });
    await transport.publish(envelope({ n: 1 }));
    await transport.publish(envelope({ n: 2 }));
    await expectEventually(() => expect(done.sort()).toEqual([1, 2]));
    expect(logger.entries.find((e) => e.msg === 'event handler failed; will retry')?.obj).toMatchObject({
      err: expect.stringMatching(/timed out/),
    });
  });

  it('reports a queue stalled past the threshold and clears once it drains', async () => {
    const transport = broker.transport('svc');
    const gate = breakable<void>();
    await transport.subscribe({ consumer: 'slow', patterns: ['job.#'], prefetch: 1 }, () => gate.promise);
    await transport.publish(envelope());
    await transport.publish(envelope());
    await sleep(60);
    expect(transport.stalledConsumers(10_000)).toEqual([]);
    expect(transport.stalledConsumers(30)).toEqual([
      expect.stringMatching(/^consumer queue svc\.slow stalled: .*\(1 pending, 1 in handler, 1 consumers\)$/),
    ]);
    gate.release();
    await expectEventually(() => expect(transport.stalledConsumers(30)).toEqual([]));
  });

  it('reports the queue of a consumer that is gone once its messages wait too long', async () => {
    const first = broker.transport('svc');
    await first.subscribe({ consumer: 'gone', patterns: ['job.#'] }, async () => {});
    await first.close();
    const second = broker.transport('svc');
    await broker.transport('producer').publish(envelope());
    await sleep(40);
    expect(second.stalledConsumers(20)).toEqual([expect.stringContaining('svc.gone stalled')]);
  });

  it('neither stops nor leaks a rejection when every log call throws', async () => {
    const broken = () => {
      throw new Error('log sink broken');
    };
    const logger: BusLogger = { info: broken, warn: broken, error: broken, debug: broken };
    const transport = broker.transport('svc', { retryDelayMs: 5, maxAttempts: 2, logger });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let calls = 0;
      await transport.subscribe({ consumer: 'w', patterns: ['job.#'] }, async () => {
        calls++;
        throw new Error('always');
      });
      await transport.publish(envelope());
      broker.publishRaw('job.run.v1', '{not json');
      await expectEventually(() => expect(broker.deadLetters('svc.w')).toHaveLength(2));
      expect(calls).toBe(2);
      await sleep(20);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('memory transport dead letters in the database', () => {
  let dbs: TestDatabase[];
  let sources: DataSource[];
  let broker: MemoryBroker;

  beforeAll(async () => {
    dbs = [await createTestDatabase('dl_api'), await createTestDatabase('dl_collab')];
    sources = await Promise.all(dbs.map((db) => openBusDatabase(db.url)));
  });

  beforeEach(async () => {
    broker = new MemoryBroker();
    for (const source of sources) await source.query('TRUNCATE dead_letters');
  });

  afterEach(async () => {
    await broker.close();
  });

  afterAll(async () => {
    for (const source of sources ?? []) await source.destroy();
    for (const db of dbs ?? []) await db.drop();
  });

  const poison = async () => {
    throw Object.assign(new Error('cannot handle this'), { retryable: false });
  };

  it("writes each service's dead letters into that service's own database", async () => {
    const api = broker.transport('api-service', { deadLetterSink: deadLetterTable(sources[0]) });
    const collab = broker.transport('collab-service', { deadLetterSink: deadLetterTable(sources[1]) });
    await api.subscribe({ consumer: 'probe', patterns: ['job.#'] }, poison);
    await collab.subscribe({ consumer: 'probe', patterns: ['job.#'] }, poison);
    const sent = envelope({ n: 1 });
    await api.publish(sent);

    const rows = async (i: number) =>
      sources[i].query(
        'SELECT queue, routing_key, event_id, attempts, error, envelope, replayed_at FROM dead_letters',
      );
    await expectEventually(async () => {
      expect(await rows(0)).toEqual([
        {
          queue: 'api-service.probe',
          routing_key: 'job.run.v1',
          event_id: sent.id,
          attempts: 1,
          error: 'cannot handle this',
          envelope: sent,
          replayed_at: null,
        },
      ]);
      expect(await rows(1)).toEqual([
        expect.objectContaining({ queue: 'collab-service.probe', event_id: sent.id }),
      ]);
    });
    // Stored, so no longer held in memory.
    expect(broker.deadLetters('api-service.probe')).toEqual([]);
  });

  it('keeps retrying a dead letter the database refuses, and stores it once the database takes it', async () => {
    const logger = recordingLogger();
    const source = sources[0];
    const transport = broker.transport('api-service', { deadLetterSink: deadLetterTable(source), logger });
    await transport.subscribe({ consumer: 'strict', patterns: ['job.#'] }, poison);
    await source.query('ALTER TABLE dead_letters RENAME TO dead_letters_away');
    let renamedBack = false;
    try {
      broker.publishRaw('job.run.v1', '{"broken":');
      await expectEventually(() =>
        expect(
          logger.entries.filter((e) => e.msg === 'storing a dead letter failed; will retry').length,
        ).toBeGreaterThanOrEqual(2),
      );
      expect(broker.deadLetters('api-service.strict')).toHaveLength(1);
      await source.query('ALTER TABLE dead_letters_away RENAME TO dead_letters');
      renamedBack = true;
      await expectEventually(async () =>
        expect(await source.query('SELECT content, envelope, event_id FROM dead_letters')).toEqual([
          { content: '{"broken":', envelope: null, event_id: null },
        ]),
      );
      expect(broker.deadLetters('api-service.strict')).toEqual([]);
    } finally {
      if (!renamedBack) await source.query('ALTER TABLE dead_letters_away RENAME TO dead_letters');
    }
  });
});
