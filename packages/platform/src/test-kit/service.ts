import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type BaseConfig, type ServiceDefinition } from '../deps';
import { createLogger } from '../logger';
import { createServiceRuntime, type ServiceRuntime } from '../runtime';
import { createTestDatabase } from './database';
import { migratedTemplate } from './migrated-template';

/** RabbitMQ the integration tests use. */
export const TEST_AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export interface TestService<C extends BaseConfig> extends ServiceRuntime<C> {
  /** JSON log lines the service wrote, parsed. */
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * Builds a service against real Postgres (a fresh database) and real RabbitMQ, without listening:
 * tests drive `app` through supertest. `env` overrides any variable (e.g. S3_* from s3rver).
 */
export async function startTestService<C extends BaseConfig>(
  definition: ServiceDefinition<C>,
  loadConfig: (env: NodeJS.ProcessEnv) => C,
  env: Record<string, string | undefined> = {},
): Promise<TestService<C>> {
  const database = await createTestDatabase(
    definition.name.replace(/-service$/, ''),
    await migratedTemplate(definition),
  );
  const dataDir = mkdtempSync(join(tmpdir(), `${definition.name}-`));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    AMQP_URL: TEST_AMQP_URL,
    DATA_DIR: dataDir,
    OUTBOX_POLL_MS: '50',
    // supertest connects from loopback; tests name their clients with X-Forwarded-For, as a gateway would.
    TRUST_PROXY: 'loopback',
    // Each test service gets its own exchange and queues: parallel test files never steal each
    // other's messages, and the broker drops the queues a few minutes after the run.
    AMQP_NAMESPACE: `test-${randomBytes(4).toString('hex')}.`,
    AMQP_QUEUE_EXPIRES_MS: '300000',
    // Classic queues for the hundreds of short-lived test services: a quorum queue is a Raft group
    // with its own log, and creating and expiring hundreds per run wore this single-node 3.10 broker
    // down (queues left `down`, classic declares taking 20 s). Production's default stays quorum; the
    // bus tests, the migration test and the cluster test run on quorum queues.
    AMQP_QUEUE_TYPE: 'classic',
    ...env,
  });
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const logger = createLogger({ service: definition.name, level: config.LOG_LEVEL, destination });
  const runtime = await createServiceRuntime(definition, config, { logger });
  return {
    ...runtime,
    logs,
    async stop() {
      await runtime.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
