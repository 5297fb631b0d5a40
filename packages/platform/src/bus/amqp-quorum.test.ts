import type { EventEnvelope } from '@hwp/contracts';
import * as amqp from 'amqplib';
import { expectEventually } from '../test-kit/eventually';
import { TcpProxy } from '../test-kit/tcp-proxy';
import { ATTEMPT_HEADER, LAST_ERROR_HEADER } from './amqp-headers';
import { workQueueArguments } from './amqp-topology';
import { AmqpTransport } from './amqp-transport';
import { buildEnvelope } from './envelope';
import {
  declaredWith,
  queueFamily,
  recordingLogger,
  sleep,
  TEST_AMQP_URL,
  uniqueSuffix,
} from './test-support';

describe('AmqpTransport on quorum work queues', () => {
  const suffix = uniqueSuffix();
  const namespace = `test-${suffix}.`;
  const serviceName = `bus-quorum-${suffix}`;
  const key = (name: string) => `test.quorum${suffix}.${name}.v1`;
  const queueOf = (consumer: string) => `${namespace}${serviceName}.${consumer}`;
  const expiresMs = 300_000;
  const queues: string[] = [];
  let proxy: TcpProxy;
  let transport: AmqpTransport;
  let admin: amqp.ChannelModel;
  let channel: amqp.ConfirmChannel;
  /** Settles the handlers left hanging on purpose, so close() does not wait for them. */
  let releaseHanging: () => void = () => undefined;

  beforeAll(async () => {
    const target = new URL(TEST_AMQP_URL);
    proxy = await TcpProxy.create({ host: target.hostname, port: Number(target.port || 5672) });
    // Through a proxy the test can cut, as a process dying in a handler would.
    transport = new AmqpTransport({
      url: proxy.rewriteUrl(TEST_AMQP_URL),
      serviceName,
      namespace,
      queueExpiresMs: expiresMs,
      logger: recordingLogger(),
      maxAttempts: 3,
      retryDelayMs: 100,
      handlerTimeoutMs: 60_000,
      reconnectInitialDelayMs: 50,
      reconnectMaxDelayMs: 200,
    });
    await transport.start();
    admin = await amqp.connect(TEST_AMQP_URL);
    channel = await admin.createConfirmChannel();
  });

  afterAll(async () => {
    releaseHanging();
    await transport?.close();
    await proxy?.close();
    for (const queue of queues.flatMap(queueFamily)) await channel?.deleteQueue(queue).catch(() => undefined);
    await channel?.deleteExchange(`${namespace}hwp.events`).catch(() => undefined);
    await admin?.close().catch(() => undefined);
  });

  async function subscribe(consumer: string, handler: (event: EventEnvelope) => Promise<void>) {
    queues.push(queueOf(consumer));
    await transport.subscribe({ consumer, patterns: [key(consumer)] }, handler);
  }

  it('declares the queue, its retry and dead-letter queues as quorum queues with a delivery limit', async () => {
    await subscribe('declared', async () => undefined);
    const args = workQueueArguments(queueOf('declared'), { type: 'quorum', maxAttempts: 3, expiresMs });
    expect(args.main).toEqual(expect.objectContaining({ 'x-queue-type': 'quorum', 'x-delivery-limit': 2 }));
    expect(await declaredWith(queueOf('declared'), args.main)).toBe('same arguments');
    expect(await declaredWith(`${queueOf('declared')}.retry`, args.retry)).toBe('same arguments');
    expect(await declaredWith(`${queueOf('declared')}.dlq`, args.dlq)).toBe('same arguments');
    // The same name as a classic queue is refused: it really is a quorum queue.
    expect(await declaredWith(`${queueOf('declared')}.dlq`, { 'x-expires': expiresMs })).toMatch(
      /inequivalent arg 'x-queue-type'/,
    );
  });

  it('retries through the quorum retry queue (per-message TTL) and parks a refused message in .dlq', async () => {
    const calls = new Map<string, number>();
    await subscribe('refused', async (event) => {
      calls.set(event.id, (calls.get(event.id) ?? 0) + 1);
      throw new Error(`refusing ${event.id}`);
    });
    const envelope = buildEnvelope({ type: key('refused'), actor: 'test', data: {} });
    await transport.publish(envelope);
    const dlq = `${queueOf('refused')}.dlq`;
    await expectEventually(async () => expect((await channel.checkQueue(dlq)).messageCount).toBe(1));
    expect(calls.get(envelope.id)).toBe(3);
    const dead = await channel.get(dlq, { noAck: true });
    if (!dead) throw new Error('dead-letter queue is empty');
    expect(JSON.parse(dead.content.toString()).id).toBe(envelope.id);
    expect(dead.properties.headers?.[LAST_ERROR_HEADER]).toBe(`refusing ${envelope.id}`);
    expect(dead.properties.headers?.[ATTEMPT_HEADER]).toBe(3);
    expect((await channel.checkQueue(queueOf('refused'))).messageCount).toBe(0);
  });

  it('dead-letters a message whose deliveries never end (the process dies in the handler) at maxAttempts', async () => {
    const hanging = new Promise<void>((resolve) => {
      releaseHanging = resolve;
    });
    let deliveries = 0;
    // The first delivery can arrive before the broker's confirm of the publish; cutting the
    // connection then would fail the publish, not the delivery. Cuts wait for the confirm.
    let confirmed: () => void = () => undefined;
    const published = new Promise<void>((resolve) => {
      confirmed = resolve;
    });
    await subscribe('crashing', async () => {
      deliveries++;
      // The handler never finishes; the connection is cut under it, as when the process dies.
      void published.then(() => proxy.stop()).then(() => proxy.start());
      await hanging;
    });
    const envelope = buildEnvelope({ type: key('crashing'), actor: 'test', data: {} });
    await transport.publish(envelope);
    confirmed();
    const dlq = `${queueOf('crashing')}.dlq`;
    await expectEventually(async () => expect((await channel.checkQueue(dlq)).messageCount).toBe(1), {
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    // Without the broker's count the message would come back after every cut, for ever.
    await sleep(1500);
    expect(deliveries).toBe(3);
    const dead = await channel.get(dlq, { noAck: true });
    if (!dead) throw new Error('dead-letter queue is empty');
    expect(JSON.parse(dead.content.toString()).id).toBe(envelope.id);
    const [death] = (dead.properties.headers?.['x-death'] ?? []) as { reason: string; queue: string }[];
    expect(death).toEqual(expect.objectContaining({ reason: 'delivery_limit', queue: queueOf('crashing') }));
    expect((await channel.checkQueue(queueOf('crashing'))).messageCount).toBe(0);
  }, 40_000);
});
