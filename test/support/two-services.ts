import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { newId } from '@hwp/platform';
import { TEST_AMQP_URL, TEST_POSTGRES_URL } from '@hwp/platform/test-kit';
import { connect } from 'amqplib';
import { Client } from 'pg';
import { freePort, SCRIPTS, type ServiceProcess, spawnService, waitForStatus } from '../process-kit';

export interface TwoServices {
  suffix: string;
  apiUrl: string;
  collabUrl: string;
  apiPort: number;
  collabPort: number;
  opsToken: string;
  databases: { api: string; collab: string };
  dbUrl(name: string): string;
  api: ServiceProcess;
  collab: ServiceProcess;
  stop(): Promise<void>;
}

export interface TwoServicesOptions {
  /** A prefix for this run's databases and AMQP namespace. */
  name: string;
  /** Variables both services get (S3_* or BLOB_DIR, PUBLIC_BASE_URL, ...). */
  env?: Record<string, string>;
  apiEnv?: Record<string, string>;
  collabEnv?: Record<string, string>;
}

function databaseUrl(name: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The docker-compose topology as separate processes: each built service in its own process with
 * the variables docker-compose.yml sets (production mode, keys supplied by the deployment), on real
 * Postgres (a database per service) and RabbitMQ (a namespace of its own per run).
 */
export async function startTwoServices(options: TwoServicesOptions): Promise<TwoServices> {
  const suffix = newId().replace(/-/g, '').slice(-10);
  const databases = { api: `${options.name}_api_${suffix}`, collab: `${options.name}_collab_${suffix}` };
  const opsToken = `ops-${suffix}`;
  const namespace = `${options.name}-${suffix}.`;
  const [apiPort, collabPort] = [await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const collabUrl = `http://127.0.0.1:${collabPort}`;
  const common = {
    NODE_ENV: 'production',
    AMQP_URL: TEST_AMQP_URL,
    OPS_TOKEN: opsToken,
    OUTBOX_POLL_MS: '100',
    LOG_LEVEL: 'warn',
    // Its own exchange and queues: another test file's service on the same broker must not take
    // (round-robin) this run's messages; the broker drops the queues a while after the run.
    AMQP_NAMESPACE: namespace,
    AMQP_QUEUE_EXPIRES_MS: '300000',
    ...options.env,
  };
  // Production refuses generated keys: the deployment supplies them, as docker-compose's .env does
  // (there as one line with literal \n, which the service also accepts).
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString()
    .replace(/\n/g, '\\n');
  const api = spawnService(SCRIPTS.api, {
    ...common,
    PORT: String(apiPort),
    DATABASE_URL: databaseUrl(databases.api),
    JWT_PRIVATE_KEY: signingKey,
    AUTH_SECRET: randomBytes(32).toString('hex'),
    ...options.apiEnv,
  });
  const collab = spawnService(SCRIPTS.collab, {
    ...common,
    PORT: String(collabPort),
    DATABASE_URL: databaseUrl(databases.collab),
    AUTH_JWKS_URL: `${apiUrl}/.well-known/jwks.json`,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    ...options.collabEnv,
  });

  async function stop(): Promise<void> {
    api.kill();
    collab.kill();
    await Promise.all([api.exited, collab.exited]);
    const admin = new Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    for (const name of Object.values(databases))
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
    const conn = await connect(TEST_AMQP_URL);
    const ch = await conn.createChannel();
    await ch.deleteExchange(`${namespace}hwp.events`).catch(() => undefined);
    await conn.close().catch(() => undefined);
  }

  try {
    await waitForStatus(`${apiUrl}/readyz`, 200, 60_000, api);
    await waitForStatus(`${collabUrl}/readyz`, 200, 60_000, collab);
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return {
    suffix,
    apiUrl,
    collabUrl,
    apiPort,
    collabPort,
    opsToken,
    databases,
    dbUrl: databaseUrl,
    api,
    collab,
    stop,
  };
}
