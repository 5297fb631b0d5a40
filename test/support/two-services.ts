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
  /** Every process of each service (the first is `api` / `collab`), with its port. */
  replicas: { api: Replica[]; collab: Replica[] };
  stop(): Promise<void>;
}

export interface Replica {
  port: number;
  url: string;
  process: ServiceProcess;
}

export interface TwoServicesOptions {
  /** A prefix for this run's databases and AMQP namespace. */
  name: string;
  /** Variables both services get (S3_* or BLOB_DIR, PUBLIC_BASE_URL, ...). */
  env?: Record<string, string>;
  apiEnv?: Record<string, string>;
  collabEnv?: Record<string, string>;
  /**
   * Processes per service (default 1), as `docker compose up --scale api-service=N` runs them: the
   * same database, broker namespace, keys and secrets, each on its own port.
   */
  replicas?: number;
  /** The PostgreSQL server the services' databases live on (default: the test server). */
  postgresUrl?: string;
}

function databaseUrlOn(server: string, name: string): string {
  const url = new URL(server);
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
  const server = options.postgresUrl ?? TEST_POSTGRES_URL;
  const databaseUrl = (name: string) => databaseUrlOn(server, name);
  const databases = { api: `${options.name}_api_${suffix}`, collab: `${options.name}_collab_${suffix}` };
  const opsToken = `ops-${suffix}`;
  const namespace = `${options.name}-${suffix}.`;
  const replicaCount = options.replicas ?? 1;
  const apiPorts: number[] = [];
  const collabPorts: number[] = [];
  for (let i = 0; i < replicaCount; i++) apiPorts.push(await freePort());
  for (let i = 0; i < replicaCount; i++) collabPorts.push(await freePort());
  const [apiPort, collabPort] = [apiPorts[0], collabPorts[0]];
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
    // Classic queues, as the in-process test services (see startTestService); the cluster test asks for quorum.
    AMQP_QUEUE_TYPE: 'classic',
    ...options.env,
  };
  // Production refuses generated keys: the deployment supplies them, as docker-compose's .env does
  // (there as one line with literal \n, which the service also accepts).
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString()
    .replace(/\n/g, '\\n');
  const apiEnv = {
    ...common,
    DATABASE_URL: databaseUrl(databases.api),
    JWT_PRIVATE_KEY: signingKey,
    AUTH_SECRET: randomBytes(32).toString('hex'),
    ...options.apiEnv,
  };
  const collabEnv = {
    ...common,
    DATABASE_URL: databaseUrl(databases.collab),
    // Any API replica serves the same keys; the first one's address stands for the service name.
    AUTH_JWKS_URL: `${apiUrl}/.well-known/jwks.json`,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    ...options.collabEnv,
  };
  const spawnReplica = (script: string, env: Record<string, string>, port: number): Replica => ({
    port,
    url: `http://127.0.0.1:${port}`,
    process: spawnService(script, { ...env, PORT: String(port) }),
  });
  // The first process of each service starts alone: it runs the migrations the others then find done.
  const replicas = {
    api: [spawnReplica(SCRIPTS.api, apiEnv, apiPort)],
    collab: [spawnReplica(SCRIPTS.collab, collabEnv, collabPort)],
  };
  const [api, collab] = [replicas.api[0].process, replicas.collab[0].process];
  const everyProcess = () => [...replicas.api, ...replicas.collab].map((r) => r.process);

  async function stop(): Promise<void> {
    for (const proc of everyProcess()) proc.kill();
    await Promise.all(everyProcess().map((proc) => proc.exited));
    const admin = new Client({ connectionString: server });
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
    replicas.api.push(...apiPorts.slice(1).map((port) => spawnReplica(SCRIPTS.api, apiEnv, port)));
    replicas.collab.push(
      ...collabPorts.slice(1).map((port) => spawnReplica(SCRIPTS.collab, collabEnv, port)),
    );
    for (const replica of [...replicas.api, ...replicas.collab].slice(0))
      await waitForStatus(`${replica.url}/readyz`, 200, 60_000, replica.process);
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
    replicas,
    stop,
  };
}

/**
 * How many outbox rows of `type` are still not marked published on `client`'s database, once none
 * is or `timeoutMs` has passed: rows are marked published after the broker's confirm, which may
 * trail the delivery.
 */
export async function unpublishedOutboxRows(
  client: Client,
  type: string,
  timeoutMs = 10_000,
): Promise<number | null> {
  const unpublished = async () =>
    (await client.query('SELECT 1 FROM outbox WHERE type = $1 AND published_at IS NULL', [type])).rowCount;
  for (const until = Date.now() + timeoutMs; (await unpublished()) && Date.now() < until; )
    await new Promise((resolve) => setTimeout(resolve, 200));
  return unpublished();
}
