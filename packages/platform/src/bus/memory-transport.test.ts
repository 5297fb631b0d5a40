import type { EventEnvelope } from '@hwp/contracts';
import { expectEventually } from '../test-kit/eventually';
import { buildEnvelope, topicMatches } from './envelope';
import { MemoryBroker } from './memory-transport';
import { sleep } from './test-support';

describe('topicMatches', () => {
  it.each([
    ['file.uploaded.v1', 'file.uploaded.v1', true],
    ['file.*.v1', 'file.uploaded.v1', true],
    ['file.*.v1', 'file.uploaded.v2', false],
    ['file.*', 'file.uploaded.v1', false],
    ['file.#', 'file.uploaded.v1', true],
    ['file.#', 'file', true],
    ['#', 'anything.at.all', true],
    ['#.v1', 'user.updated.v1', true],
    ['#.v1', 'v1', true],
    ['*.updated.#', 'user.updated', true],
    ['*.updated.#', 'updated.v1', false],
    ['user.#.v1', 'user.a.b.c.v1', true],
    ['user.#.v1', 'user.v1', true],
    ['user.#.v1', 'user.a.v2', false],
  ])('%s vs %s -> %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});

describe('MemoryTransport', () => {
  let broker: MemoryBroker;

  beforeEach(() => {
    broker = new MemoryBroker();
  });

  afterEach(async () => {
    await broker.close();
  });

  const envelope = (type: string, data: unknown = {}) => buildEnvelope({ type, actor: 'test', data });

  it('routes by topic pattern, one queue per consumer', async () => {
    const transport = broker.transport('svc');
    const got: Record<string, string[]> = { files: [], all: [], uploads: [] };
    const record = (name: string) => async (e: EventEnvelope) => {
      got[name].push(e.type);
    };
    await transport.subscribe({ consumer: 'files', patterns: ['file.#'] }, record('files'));
    await transport.subscribe({ consumer: 'all', patterns: ['#'] }, record('all'));
    await transport.subscribe(
      { consumer: 'uploads', patterns: ['*.uploaded.v1', 'user.updated.v1'] },
      record('uploads'),
    );

    for (const type of ['file.uploaded.v1', 'file.processed.v1', 'user.updated.v1', 'system.ping.v1']) {
      await transport.publish(envelope(type));
    }
    await expectEventually(() => expect(got.all).toHaveLength(4));
    await sleep(20);
    expect(got.files.sort()).toEqual(['file.processed.v1', 'file.uploaded.v1']);
    expect(got.uploads.sort()).toEqual(['file.uploaded.v1', 'user.updated.v1']);
    expect(broker.queueNames().sort()).toEqual(['svc.all', 'svc.files', 'svc.uploads']);
  });

  it('delivers asynchronously and hands each consumer its own copy', async () => {
    const transport = broker.transport('svc');
    const seen: EventEnvelope[] = [];
    await transport.subscribe({ consumer: 'c', patterns: ['#'] }, async (e) => {
      seen.push(e);
    });
    const sent = envelope('a.b.v1', { n: 1 });
    await transport.publish(sent);
    expect(seen).toEqual([]);
    await expectEventually(() => expect(seen).toHaveLength(1));
    expect(seen[0]).toEqual(sent);
    expect(seen[0]).not.toBe(sent);
  });

  it('retries a failing message, then dead-letters it while others flow', async () => {
    const transport = broker.transport('svc', { maxAttempts: 3, retryDelayMs: 20 });
    const calls = new Map<string, number>();
    const done: string[] = [];
    await transport.subscribe({ consumer: 'worker', patterns: ['job.#'] }, async (e) => {
      calls.set(e.id, (calls.get(e.id) ?? 0) + 1);
      if ((e.data as { poison?: boolean }).poison) throw new Error('bad job');
      done.push(e.id);
    });
    const poison = envelope('job.run.v1', { poison: true });
    const fine = [envelope('job.run.v1'), envelope('job.run.v1')];
    await transport.publish(poison);
    for (const e of fine) await transport.publish(e);

    await expectEventually(() => expect(broker.deadLetters('svc.worker')).toHaveLength(1));
    expect(done).toEqual(fine.map((e) => e.id));
    expect(calls.get(poison.id)).toBe(3);
    const [dead] = broker.deadLetters('svc.worker');
    expect(dead).toMatchObject({
      queue: 'svc.worker',
      routingKey: 'job.run.v1',
      attempts: 3,
      error: 'bad job',
    });
    expect(dead.envelope).toEqual(poison);
    await sleep(100);
    expect(calls.get(poison.id)).toBe(3);
  });

  it('honours maxAttempts and retryDelayMs set on the subscription', async () => {
    const transport = broker.transport('svc', { maxAttempts: 10, retryDelayMs: 10_000 });
    let calls = 0;
    await transport.subscribe(
      { consumer: 'strict', patterns: ['x.#'], maxAttempts: 2, retryDelayMs: 5 },
      async () => {
        calls++;
        throw new Error('nope');
      },
    );
    await transport.publish(envelope('x.y.v1'));
    await expectEventually(() => expect(broker.deadLetters('svc.strict')).toHaveLength(1));
    expect(calls).toBe(2);
  });

  it('dead-letters a body that is not an envelope without calling the handler', async () => {
    const transport = broker.transport('svc');
    let calls = 0;
    await transport.subscribe({ consumer: 'strict', patterns: ['#'] }, async () => {
      calls++;
    });
    broker.publishRaw('x.y.v1', '{oops');
    broker.publishRaw('x.y.v1', JSON.stringify({ id: 'not-a-uuid', type: 'x.y.v1' }));
    await expectEventually(() => expect(broker.deadLetters('svc.strict')).toHaveLength(2));
    expect(calls).toBe(0);
    expect(broker.deadLetters('svc.strict')[0]).toMatchObject({
      envelope: null,
      content: '{oops',
      attempts: 1,
    });
  });

  it('gives two services on one broker their own consumers', async () => {
    const api = broker.transport('api-service');
    const collab = broker.transport('collab-service');
    const seen: string[] = [];
    // Same consumer name on both sides: still two queues, so both get the message.
    await api.subscribe({ consumer: 'probe', patterns: ['system.#'] }, async (e) => {
      seen.push(`api:${e.id}`);
    });
    await collab.subscribe({ consumer: 'probe', patterns: ['system.ping.v1'] }, async (e) => {
      seen.push(`collab:${e.id}`);
    });
    const ping = envelope('system.ping.v1');
    await api.publish(ping);
    await expectEventually(() => expect(seen.sort()).toEqual([`api:${ping.id}`, `collab:${ping.id}`]));
    expect(broker.queueNames().sort()).toEqual(['api-service.probe', 'collab-service.probe']);
  });

  it('keeps queueing for a closed service and resumes when it subscribes again', async () => {
    const first = broker.transport('svc');
    const seen: string[] = [];
    await first.subscribe({ consumer: 'c', patterns: ['#'] }, async (e) => {
      seen.push(e.id);
    });
    await first.close();
    expect(first.isConnected()).toBe(false);
    await expect(first.publish(envelope('a.b.v1'))).rejects.toThrow(/closed/);
    await expect(first.ping()).rejects.toThrow(/closed/);

    const producer = broker.transport('other');
    const waiting = envelope('a.b.v1');
    await producer.publish(waiting);
    await sleep(20);
    expect(seen).toEqual([]);
    expect(broker.pendingCount('svc.c')).toBe(1);

    const second = broker.transport('svc');
    await second.subscribe({ consumer: 'c', patterns: ['#'] }, async (e) => {
      seen.push(e.id);
    });
    await expectEventually(() => expect(seen).toEqual([waiting.id]));
  });

  it('limits concurrent deliveries to the prefetch', async () => {
    const transport = broker.transport('svc');
    let running = 0;
    let peak = 0;
    let finished = 0;
    await transport.subscribe({ consumer: 'slow', patterns: ['#'], prefetch: 2 }, async () => {
      running++;
      peak = Math.max(peak, running);
      await sleep(10);
      running--;
      finished++;
    });
    for (let i = 0; i < 6; i++) await transport.publish(envelope('a.b.v1'));
    await expectEventually(() => expect(finished).toBe(6));
    expect(peak).toBe(2);
  });
});
