import type { EventEnvelope } from '@hwp/contracts';
import { expectEventually } from '../test-kit/eventually';
import { TcpProxy } from '../test-kit/tcp-proxy';
import { AmqpTransport } from './amqp-transport';
import { queueNameOf } from './bus';
import { buildEnvelope } from './envelope';
import {
  openAdmin,
  queueFamily,
  recordingLogger,
  settlesWithoutWaiting,
  sleep,
  TEST_AMQP_URL,
  uniqueSuffix,
} from './test-support';

/**
 * Several broker addresses, each a proxy that the test can take away, all in front of the machine's
 * broker: as far as the client can tell, the nodes of a cluster. (The real three-node cluster, with
 * a queue leader stopped under load, is test/broker-cluster.test.ts.)
 */
describe('amqp transport over several broker addresses', () => {
  const suffix = uniqueSuffix();
  const routingKey = `test.failover${suffix}.created.v1`;
  const target = new URL(TEST_AMQP_URL);
  const nodes: TcpProxy[] = [];
  const transports: AmqpTransport[] = [];
  const queues: string[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++)
      nodes.push(await TcpProxy.create({ host: target.hostname, port: Number(target.port || 5672) }));
  });

  afterEach(async () => {
    for (const transport of transports.splice(0)) await transport.close();
    for (const node of nodes) await node.start();
  });

  afterAll(async () => {
    const admin = await openAdmin();
    await admin.deleteQueues(queues.flatMap(queueFamily));
    await admin.close();
    for (const node of nodes) await node.close();
  });

  const urls = () => nodes.map((node) => node.rewriteUrl(TEST_AMQP_URL));
  /** Which proxy the transport is connected through (-1: none). */
  const nodeOf = (transport: AmqpTransport) => {
    const broker = transport.connectedBroker();
    return broker ? nodes.findIndex((node) => new URL(broker).port === String(node.port)) : -1;
  };

  function transport(name: string, extra: Partial<ConstructorParameters<typeof AmqpTransport>[0]> = {}) {
    const created = new AmqpTransport({
      url: urls(),
      serviceName: `bus-failover-${name}-${suffix}`,
      reconnectInitialDelayMs: 100,
      reconnectMaxDelayMs: 400,
      startTimeoutMs: 3000,
      ...extra,
    });
    transports.push(created);
    return created;
  }

  async function consume(on: AmqpTransport, consumer: string): Promise<EventEnvelope[]> {
    const seen: EventEnvelope[] = [];
    queues.push(queueNameOf(on.serviceName, consumer));
    await on.subscribe({ consumer, patterns: [routingKey] }, async (event) => {
      seen.push(event);
    });
    return seen;
  }

  it('connects to the first address that answers, in the order given', async () => {
    await nodes[0].stop();
    const log = recordingLogger();
    const late = transport('order', { logger: log });
    await late.start();
    expect(nodeOf(late)).toBe(1);
    const connected = log.entries.find((e) => e.msg === 'amqp connected');
    // The log names the node, never the password.
    expect(JSON.stringify(connected?.obj)).toContain(`:${nodes[1].port}`);
    expect(JSON.stringify(log.entries)).not.toContain(':guest@');
  });

  it('moves to another node when its connection drops, and its consumers and publishing move too', async () => {
    const producer = transport('producer');
    const consumer = transport('consumer');
    await Promise.all([producer.start(), consumer.start()]);
    const seen = await consume(consumer, 'moving');
    expect([nodeOf(producer), nodeOf(consumer)]).toEqual([0, 0]);

    await nodes[0].stop();
    await expectEventually(() => expect([nodeOf(producer), nodeOf(consumer)]).toEqual([1, 1]), {
      timeoutMs: 5000,
    });
    // The queue, on the broker, outlived the node: the consumer is attached to it again.
    await expectEventually(async () => {
      const admin = await openAdmin();
      try {
        expect(
          (await admin.channel.checkQueue(queueNameOf(consumer.serviceName, 'moving'))).consumerCount,
        ).toBe(1);
      } finally {
        await admin.close();
      }
    });
    const envelope = buildEnvelope({ type: routingKey, actor: 'test', data: { n: 1 } });
    await producer.publish(envelope);
    await expectEventually(() => expect(seen.map((e) => e.id)).toEqual([envelope.id]));
  });

  it('after a drop tries the next address first, even when its own answers again at once', async () => {
    const producer = transport('next-first');
    await producer.start();
    expect(nodeOf(producer)).toBe(0);
    // A blip: the connection goes, the address is back before the first reconnect (80-120 ms later).
    await nodes[0].stop();
    await nodes[0].start();
    await expectEventually(() => expect(nodeOf(producer)).toBe(1), { timeoutMs: 5000 });
  });

  it('keeps going round the addresses while every one is down, and connects when one returns', async () => {
    const log = recordingLogger();
    const producer = transport('rounds', { logger: log });
    await producer.start();
    for (const node of nodes) await node.stop();
    await expectEventually(() => expect(producer.isConnected()).toBe(false));
    await sleep(1000);
    // Each round tries all three, then backs off (100, 200, 400 ms, ... capped at 400).
    const attempts = log.entries.filter((e) => e.msg === 'amqp connect attempt failed');
    expect(attempts.length).toBeGreaterThanOrEqual(6);
    expect(new Set(attempts.map((e) => (e.obj as { url: string }).url)).size).toBe(3);

    await nodes[2].start();
    await producer.waitUntilConnected(3000);
    expect(nodeOf(producer)).toBe(2);
  });

  it('lets a publish wait for the failover instead of failing, within publishWaitMs', async () => {
    const producer = transport('waiting', { publishWaitMs: 5000 });
    const consumer = transport('waiting-consumer');
    await Promise.all([producer.start(), consumer.start()]);
    const seen = await consume(consumer, 'waiting');

    for (const node of nodes) await node.stop();
    await expectEventually(() => expect(producer.isConnected()).toBe(false));
    const envelope = buildEnvelope({ type: routingKey, actor: 'test', data: { n: 2 } });
    const publishing = producer.publish(envelope);
    expect(await settlesWithoutWaiting(publishing)).toBe(false);
    await sleep(300);
    await nodes[1].start();
    await publishing;
    await expectEventually(() => expect(seen.map((e) => e.id)).toEqual([envelope.id]));
  });

  it('gives up waiting after publishWaitMs, so the outbox keeps the event', async () => {
    const producer = transport('bounded', { publishWaitMs: 300 });
    await producer.start();
    for (const node of nodes) await node.stop();
    await expectEventually(() => expect(producer.isConnected()).toBe(false));
    const started = Date.now();
    await expect(
      producer.publish(buildEnvelope({ type: routingKey, actor: 'test', data: {} })),
    ).rejects.toThrow(/not connected/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses an empty address list', () => {
    expect(() => new AmqpTransport({ url: [], serviceName: 'nothing' })).toThrow(/at least one broker URL/);
  });
});
