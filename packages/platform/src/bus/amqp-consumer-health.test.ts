import { expectEventually } from '../test-kit/eventually';
import { AmqpTransport } from './amqp-transport';
import { buildEnvelope } from './envelope';
import { openAdmin, queueFamily, recordingLogger, TEST_AMQP_URL, uniqueSuffix } from './test-support';

describe('AmqpTransport consumers that stall', () => {
  const suffix = uniqueSuffix();
  const namespace = `test-${suffix}.`;
  const serviceName = 'health-svc';
  const type = `test.health${suffix}.run.v1`;
  let transport: AmqpTransport;
  let admin: Awaited<ReturnType<typeof openAdmin>>;
  const logger = recordingLogger();

  beforeAll(async () => {
    transport = new AmqpTransport({
      url: TEST_AMQP_URL,
      serviceName,
      namespace,
      queueExpiresMs: 300_000,
      logger,
      maxAttempts: 3,
      retryDelayMs: 50,
    });
    await transport.start();
    admin = await openAdmin();
  });

  afterAll(async () => {
    await transport?.close();
    await admin?.deleteQueues([
      ...queueFamily(`${namespace}${serviceName}.hang`),
      ...queueFamily(`${namespace}${serviceName}.cancelled`),
    ]);
    await admin?.close();
  });

  it('reports a handler running past the threshold, then times it out and retries the message', async () => {
    const done: string[] = [];
    let calls = 0;
    let hanging = false;
    await transport.subscribe(
      { consumer: 'hang', patterns: [type], handlerTimeoutMs: 600, prefetch: 1 },
      async (event) => {
        calls++;
        if (calls === 1) {
          hanging = true;
          return new Promise<void>(() => {});
        }
        done.push(event.id);
      },
    );
    const sent = buildEnvelope({ type, actor: 'test', data: {} });
    await transport.publish(sent);
    await expectEventually(() => expect(hanging).toBe(true));
    await expectEventually(() =>
      expect(transport.stalledConsumers(100)).toEqual([
        expect.stringMatching(
          new RegExp(`^consumer ${namespace}${serviceName}\\.hang has a handler running for \\d+ s$`),
        ),
      ]),
    );
    await expectEventually(() => expect(done).toEqual([sent.id]));
    expect(calls).toBe(2);
    expect(transport.stalledConsumers(100)).toEqual([]);
    expect(logger.entries.find((e) => e.msg === 'event handler failed; will retry')?.obj).toMatchObject({
      eventId: sent.id,
      err: expect.stringMatching(/timed out/),
    });
  });

  it('reports a consumer the broker cancelled until it consumes again', async () => {
    const queue = `${namespace}${serviceName}.cancelled`;
    await transport.subscribe({ consumer: 'cancelled', patterns: [`${type}.never`] }, async () => {});
    expect(transport.stalledConsumers(0)).toEqual([]);
    await admin.channel.deleteQueue(queue);
    await expectEventually(() =>
      expect(transport.stalledConsumers(0)).toEqual([
        expect.stringContaining(`consumer ${queue} not consuming`),
      ]),
    );
    await expectEventually(() => expect(transport.stalledConsumers(0)).toEqual([]), { timeoutMs: 10_000 });
  });
});
