import { request as httpRequest } from 'node:http';
import {
  createTestDatabase,
  expectEventually,
  TEST_AMQP_URL,
  type TestDatabase,
} from '@hwp/platform/test-kit';
import { freePort, SCRIPTS, spawnService, waitForStatus } from './process-kit';

describe('service process lifecycle', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase('life');
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('stops at start with one message naming every bad variable', async () => {
    const proc = spawnService(SCRIPTS.api, {
      PORT: 'not-a-port',
      DATABASE_URL: 'nonsense',
      LOG_LEVEL: 'loud',
      S3_BUCKET: 'b',
      S3_ACCESS_KEY_ID: 'only-half',
    });
    expect(await proc.exited).toBe(1);
    const lines = proc.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^api-service: invalid configuration: /);
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL']) expect(lines[0]).toContain(name);
  });

  it('on SIGTERM finishes the in-flight slow request, then exits 0', async () => {
    const port = await freePort();
    const proc = spawnService(SCRIPTS.api, {
      PORT: String(port),
      DATABASE_URL: database.url,
      AMQP_URL: TEST_AMQP_URL,
      // Unique per run: a queue of an earlier run with other arguments would be refused.
      AMQP_NAMESPACE: `life-${port}-${Date.now()}.`,
      AMQP_QUEUE_EXPIRES_MS: '300000',
      AMQP_QUEUE_TYPE: 'classic',
      DATA_DIR: `/tmp/hwp-life-${port}`,
      LOG_LEVEL: 'info',
    });
    await waitForStatus(`http://127.0.0.1:${port}/readyz`, 200, 60_000, proc);

    // A slow client: the body arrives in two halves, SIGTERM in between. Each step waits for the
    // service to show it got there, not for a guess at how long that takes.
    const body = JSON.stringify({ note: 'sent across a shutdown' });
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/system/probes',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        // Answered with 100 Continue once the service has the request: from then on it is in flight.
        expect: '100-continue',
      },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
    });
    const inFlight = new Promise<void>((resolve) => req.once('continue', () => resolve()));
    req.flushHeaders();
    await inFlight;
    req.write(body.slice(0, 10));
    const logged = proc.output().length;
    proc.kill('SIGTERM');
    await expectEventually(() => expect(proc.output().slice(logged)).toContain('shutting down'), {
      timeoutMs: 30_000,
    });
    // The drain sweeps idle connections every 100 ms; several sweeps pass this one, which is not idle.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    req.end(body.slice(10));

    const res = await response;
    expect(res.status).toBe(202);
    expect(JSON.parse(res.body)).toEqual(
      expect.objectContaining({ note: 'sent across a shutdown', direction: 'sent' }),
    );
    expect(await proc.exited).toBe(0);
    // No new connections are accepted after shutdown.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    expect(proc.output()).toContain('shutdown complete');
  });
});
