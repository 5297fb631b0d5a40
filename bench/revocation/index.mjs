// How long an ended session keeps working after POST /auth/logout, from the built dist (`pnpm build`
// first), against real Postgres and RabbitMQ (BENCH_POSTGRES_URL, BENCH_AMQP_URL; defaults: the local
// test servers). DECISIONS.md section 1 allows 5 s; the tests check the outcome, this measures it.
// 1. API host: a second app on the same deps (its own live-session cache, like another replica) has
//    accepted the access token; after the logout on the first, the time until it answers 401.
// 2. Collaboration host: it has accepted the token; after the logout, the time until it answers 401
//    (session.revoked.v1 through the outbox, the relay and the broker).
// Both are polled every BENCH_POLL_MS (10) from the moment the logout answered, BENCH_REVOCATIONS
// (20) sessions. Baseline, same run and broker: a bare publish -> consume round trip (amqplib, one
// queue). API host, collaboration host and the polling client share this process. JSON lines.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { throwawayDatabase } from '../lib/postgres.mjs';

const require = createRequire(import.meta.url);
const root = new URL('../../', import.meta.url).pathname;
const api = require(join(root, 'services/api-service/dist/index.js'));
const collab = require(join(root, 'services/collab-service/dist/index.js'));
const { createServiceRuntime, createLogger } = require(join(root, 'packages/platform/dist/index.js'));
const amqp = createRequire(join(root, 'packages/platform/package.json'))('amqplib');

const amqpUrl = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const samples = Number(process.env.BENCH_REVOCATIONS ?? 20);
const pollMs = Number(process.env.BENCH_POLL_MS ?? 10);
const TARGET_MS = 5_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10;
};
const figures = (values) => ({
  p50Ms: quantile(values, 0.5),
  p99Ms: quantile(values, 0.99),
  maxMs: quantile(values, 1),
});

function listen(app) {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}
const baseOf = (server) => `http://127.0.0.1:${server.address().port}`;

async function call(base, method, path, { token, body } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function expectStatus(base, method, path, status, options) {
  const res = await call(base, method, path, options);
  if (res.status !== status)
    throw new Error(
      `${method} ${path} answered ${res.status} (expected ${status}): ${JSON.stringify(res.body)}`,
    );
  return res.body;
}

/** Milliseconds from `since` until `path` on `base` answers 401 for `token`. */
async function refusedAfter(base, path, token, since) {
  for (;;) {
    const { status } = await call(base, 'GET', path, { token });
    if (status === 401) return performance.now() - since;
    if (status !== 200) throw new Error(`GET ${path} answered ${status} while the revocation spread`);
    if (performance.now() - since > 60_000)
      throw new Error(`GET ${path} still accepted the token after 60 s`);
    await sleep(pollMs);
  }
}

/** Publish -> deliver latency of one bare message on the same broker, `count` times. */
async function brokerRoundTrips(count) {
  const connection = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  let arrived = () => {};
  await channel.consume(queue, () => arrived(), { noAck: true });
  const trips = [];
  for (let i = 0; i < count + 5; i++) {
    const delivered = new Promise((resolve) => {
      arrived = resolve;
    });
    const started = performance.now();
    channel.sendToQueue(queue, Buffer.from(JSON.stringify({ i })));
    await delivered;
    if (i >= 5) trips.push(performance.now() - started); // the first few warm the path up
  }
  await connection.close();
  return trips;
}

const dataDirs = [
  mkdtempSync(join(tmpdir(), 'bench-revocation-api-')),
  mkdtempSync(join(tmpdir(), 'bench-revocation-collab-')),
];
// Private by default; as root the embedded PostgreSQL server runs as `postgres`, which must enter it.
for (const dir of dataDirs) chmodSync(dir, 0o755);
const databases = [
  await throwawayDatabase('bench_revocation_api'),
  await throwawayDatabase('bench_revocation_collab'),
];
const namespace = `bench-${randomBytes(4).toString('hex')}.`;
const sink = new Writable({ write: (_chunk, _enc, done) => done() });
const runtimes = [];
const servers = [];
try {
  const apiConfig = api.loadApiConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDirs[0],
    DATABASE_URL: databases[0].url,
    AMQP_URL: amqpUrl,
    AMQP_NAMESPACE: namespace,
    AMQP_QUEUE_EXPIRES_MS: '300000',
    AUTH_REQUIRE_CONFIRMATION: 'false',
    // The bench logs in and polls from one address.
    RATE_LIMIT_STANDARD_PER_WINDOW: '1000000000',
    LOGIN_MAX_FAILURES_PER_IP: '1000000000',
  });
  const apiRuntime = await createServiceRuntime(api.apiService, apiConfig, {
    logger: createLogger({ service: 'api-service', level: 'warn', destination: sink }),
  });
  runtimes.push(apiRuntime);
  const apiServer = await listen(apiRuntime.app);
  // Another replica of the API host: same database and bus, a live-session cache of its own.
  const replicaServer = await listen(api.createApp(apiRuntime.deps));
  servers.push(apiServer, replicaServer);
  const apiBase = baseOf(apiServer);
  const replicaBase = baseOf(replicaServer);

  const collabConfig = collab.loadCollabConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDirs[1],
    DATABASE_URL: databases[1].url,
    AMQP_URL: amqpUrl,
    AMQP_NAMESPACE: namespace,
    AMQP_QUEUE_EXPIRES_MS: '300000',
    AUTH_JWKS_URL: `${apiBase}/.well-known/jwks.json`,
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000000',
  });
  const collabRuntime = await createServiceRuntime(collab.collabService, collabConfig, {
    logger: createLogger({ service: 'collab-service', level: 'warn', destination: sink }),
  });
  runtimes.push(collabRuntime);
  const collabServer = await listen(collabRuntime.app);
  servers.push(collabServer);
  const collabBase = baseOf(collabServer);

  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const password = 'correct horse battery';
  await expectStatus(apiBase, 'POST', '/auth/signup', 200, { body: { email, password } });

  const apiDelays = [];
  const collabDelays = [];
  for (let i = 0; i < samples + 2; i++) {
    const login = await expectStatus(apiBase, 'POST', '/auth/login', 200, { body: { email, password } });
    const token = login.session.access_token;
    // Both have seen the session alive (the replica has it cached).
    await expectStatus(replicaBase, 'GET', '/auth/user', 200, { token });
    await expectStatus(collabBase, 'GET', '/api/session', 200, { token });
    await expectStatus(collabBase, 'GET', '/v1/workspaces', 200, { token });
    await expectStatus(apiBase, 'POST', '/auth/logout', 204, { token });
    const since = performance.now();
    const [onApi, onCollab] = await Promise.all([
      refusedAfter(replicaBase, '/auth/user', token, since),
      refusedAfter(collabBase, '/v1/workspaces', token, since),
    ]);
    // The first two warm up the paths (JWKS fetch, first consumer delivery).
    if (i >= 2) {
      apiDelays.push(onApi);
      collabDelays.push(onCollab);
    }
  }
  const trips = await brokerRoundTrips(samples);
  const broker = figures(trips);

  console.log(
    JSON.stringify({
      bench: 'revocation',
      figure: 'api-replica',
      how: 'logout on one API app, GET /auth/user on another app of the same deps until 401',
      samples,
      pollMs,
      sessionCheckCacheMs: apiConfig.SESSION_CHECK_CACHE_MS,
      ...figures(apiDelays),
      targetMs: TARGET_MS,
      maxToTarget: Number((quantile(apiDelays, 1) / TARGET_MS).toFixed(3)),
    }),
  );
  const onCollab = figures(collabDelays);
  console.log(
    JSON.stringify({
      bench: 'revocation',
      figure: 'collab-host',
      how: 'logout on the API host, GET /v1/workspaces on the collaboration host until 401',
      samples,
      pollMs,
      ...onCollab,
      targetMs: TARGET_MS,
      maxToTarget: Number((onCollab.maxMs / TARGET_MS).toFixed(3)),
      baselineP50Ms: broker.p50Ms,
      baselineP99Ms: broker.p99Ms,
      ratio: Number((onCollab.p50Ms / broker.p50Ms).toFixed(1)),
      baseline: 'bare publish -> consume round trip on the same broker, same run',
    }),
  );
} finally {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  for (const runtime of runtimes.reverse()) await runtime.close().catch(() => {});
  for (const database of databases) await database.drop().catch(() => {});
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
