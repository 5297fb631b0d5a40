// Cost of authentication on the API host, from the built dist (`pnpm build` first).
// 1. Token verification per request: the auth module's `authenticate` middleware (passport-jwt
//    verify of an RS256 access token + the cached live-session check) in front of a route answering
//    `{}`, against the same route without it, in the same process and run.
// 2. Login throughput at the configured argon2id cost (m=19456 KiB, t=2, p=1): POST /auth/login
//    with valid credentials at concurrency 8, against raw @node-rs/argon2 verify at the same
//    concurrency, so the ratio is what HTTP, rate-limit counters, the user lookup and the session
//    insert cost on top of the hash.
// 3. Failed-login timing: one login at a time, alternating a wrong password for an existing account
//    (the baseline) and an unknown email, BENCH_FAILED_LOGINS (40) of each. The unknown account is
//    checked against a dummy hash of the same cost, so the ratio of the medians should be about 1
//    (auth.test.ts checks that the dummy check happens; this is where its time is measured).
// Postgres at BENCH_POSTGRES_URL (default the local test server) on a throwaway database, else the
// embedded one; in-process bus. Figures are JSON lines.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import autocannon from 'autocannon';
import express from 'express';
import { throwawayDatabase } from '../lib/postgres.mjs';

const require = createRequire(import.meta.url);
const root = new URL('../../', import.meta.url).pathname;
const apiDist = join(root, 'services/api-service/dist');
const { apiService, loadApiConfig } = require(join(apiDist, 'index.js'));
const { createAuthModule } = require(join(apiDist, 'modules/auth/auth.module.js'));
const { TenantsService } = require(join(apiDist, 'modules/tenants/tenants.service.js'));
const { createServiceRuntime, createLogger } = require(join(root, 'packages/platform/dist/index.js'));
// Dependencies of the api-service package, resolved from there.
const apiRequire = createRequire(join(root, 'services/api-service/package.json'));
const argon2 = apiRequire('@node-rs/argon2');

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const loginConcurrency = Number(process.env.BENCH_LOGIN_CONCURRENCY ?? 8);
const failedLogins = Number(process.env.BENCH_FAILED_LOGINS ?? 40);

function listen(app) {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function load(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function postJson(port, path, body) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-auth-'));
// Private by default; as root the embedded PostgreSQL server runs as `postgres`, which must enter it.
chmodSync(dataDir, 0o755);
const database = await throwawayDatabase('bench_auth', { optional: true });
const config = loadApiConfig({
  DATA_DIR: dataDir,
  ...(database ? { DATABASE_URL: database.url } : {}),
  LOG_LEVEL: 'info',
  AUTH_REQUIRE_CONFIRMATION: 'false',
  // The bench logs in thousands of times from one address.
  RATE_LIMIT_STANDARD_PER_WINDOW: '1000000000',
  LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000000',
  LOGIN_MAX_FAILURES_PER_ACCOUNT_TOTAL: '1000000000',
  LOGIN_MAX_FAILURES_PER_IP: '1000000000',
});
// Request logs are written (their cost counts) but not shown.
const sink = new Writable({ write: (_chunk, _enc, done) => done() });
const runtime = await createServiceRuntime(apiService, config, {
  logger: createLogger({ service: 'api-service', level: 'info', destination: sink }),
});
const full = await listen(runtime.app);
const fullPort = full.address().port;

const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
const password = 'correct horse battery';
const signup = await postJson(fullPort, '/auth/signup', { email, password });
const token = signup.session.access_token;

// --- 1. token verification per request ---------------------------------------------------------
// A second auth module on the same deps: same data folder, so the same generated signing key and
// secret, and the same database, so the same session. Only `authenticate` is used.
const auth = createAuthModule(runtime.deps, new TenantsService(runtime.deps.dataSource), async () => {});
const handler = (_req, res) => {
  res.json({});
};
const withAuth = express();
withAuth.get('/ping', auth.authenticate, handler);
withAuth.use((error, _req, res, _next) => {
  res.status(error.status ?? 500).json({ code: error.code });
});
const withoutAuth = express();
withoutAuth.get('/ping', handler);
const onServer = await listen(withAuth);
const offServer = await listen(withoutAuth);

const authorized = { authorization: `Bearer ${token}` };
const check = await fetch(`http://127.0.0.1:${onServer.address().port}/ping`, { headers: authorized });
if (check.status !== 200) throw new Error(`the authenticated route answered ${check.status}`);
const denied = await fetch(`http://127.0.0.1:${onServer.address().port}/ping`);
if (denied.status !== 401) throw new Error(`without a token the route answered ${denied.status}`);

const ping = (server, duration) =>
  load({
    url: `http://127.0.0.1:${server.address().port}/ping`,
    headers: authorized,
    connections,
    duration,
  });
// Warm both up, then measure alternately so machine noise hits both.
await ping(offServer, warmupSeconds);
await ping(onServer, warmupSeconds);
const off = await ping(offServer, seconds);
const on = await ping(onServer, seconds);
if (on.non2xx || off.non2xx) throw new Error(`non-2xx answers: on ${on.non2xx}, off ${off.non2xx}`);

console.log(
  JSON.stringify({
    bench: 'auth',
    figure: 'token-verification',
    route: 'GET /ping (answers {}) with and without authenticate',
    algorithm: JSON.parse(Buffer.from(token.split('.')[0], 'base64url')).alg,
    sessionCheckCacheMs: config.SESSION_CHECK_CACHE_MS,
    connections,
    seconds,
    rps: Math.round(on.requests.average),
    baselineRps: Math.round(off.requests.average),
    ratio: Number((on.requests.average / off.requests.average).toFixed(3)),
    p99Ms: on.latency.p99,
    baselineP99Ms: off.latency.p99,
    // What one verification costs the event loop, from the throughput difference.
    usPerRequest: Number((1e6 / on.requests.average - 1e6 / off.requests.average).toFixed(1)),
  }),
);
onServer.close();
offServer.close();

// --- 2. login throughput -------------------------------------------------------------------------
// One account per connection: logins come from many users, and concurrent logins of one account
// serialize on its row.
const accounts = [email];
while (accounts.length < loginConcurrency) {
  const other = `bench-${randomBytes(4).toString('hex')}@example.test`;
  await postJson(fullPort, '/auth/signup', { email: other, password });
  accounts.push(other);
}
const login = (duration) => {
  let next = 0;
  return load({
    url: `http://127.0.0.1:${fullPort}/auth/login`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections: loginConcurrency,
    duration,
    setupClient(client) {
      client.setBody(JSON.stringify({ email: accounts[next++ % accounts.length], password }));
    },
  });
};

/** Raw argon2id verify of the same stored hash: `concurrency` loops for `duration` seconds. */
async function rawVerify(stored, duration) {
  const latencies = [];
  const deadline = performance.now() + duration * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      if (!(await argon2.verify(stored, password))) throw new Error('argon2 verify failed');
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: loginConcurrency }, worker));
  latencies.sort((a, b) => a - b);
  const at = (q) =>
    Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(1));
  return { perSecond: latencies.length / duration, p50: at(0.5), p99: at(0.99) };
}

const [user] = await runtime.deps.dataSource.query('SELECT encrypted_password FROM users WHERE email = $1', [
  email,
]);
const stored = user?.encrypted_password;
if (!stored) throw new Error('no stored password hash for the bench user');

await login(warmupSeconds);
await rawVerify(stored, warmupSeconds);
const raw = await rawVerify(stored, seconds);
const logins = await login(seconds);
if (logins.non2xx || logins.errors) {
  throw new Error(
    `login failures: ${logins.non2xx} non-2xx (${JSON.stringify(logins.statusCodeStats)}), ${logins.errors} errors`,
  );
}

console.log(
  JSON.stringify({
    bench: 'auth',
    figure: 'login-throughput',
    route: 'POST /auth/login (valid credentials)',
    hash: `argon2id m=${config.PASSWORD_HASH_MEMORY_KIB} KiB t=${config.PASSWORD_HASH_ITERATIONS} p=1`,
    cpus: availableParallelism(),
    database: database ? 'postgres' : 'embedded',
    concurrency: loginConcurrency,
    accounts: accounts.length,
    seconds,
    loginsPerSecond: Number(logins.requests.average.toFixed(1)),
    baselineVerifiesPerSecond: Number(raw.perSecond.toFixed(1)),
    ratio: Number((logins.requests.average / raw.perSecond).toFixed(3)),
    p50Ms: logins.latency.p50,
    p99Ms: logins.latency.p99,
    baselineP50Ms: raw.p50,
    baselineP99Ms: raw.p99,
  }),
);

// --- 3. failed-login timing ----------------------------------------------------------------------
/** Milliseconds of one failed POST /auth/login (it must answer 400 invalid_credentials). */
async function failedLogin(loginEmail) {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${fullPort}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: loginEmail, password: 'not the password' }),
  });
  const body = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 400 || body.code !== 'invalid_credentials')
    throw new Error(`a failed login answered ${res.status} ${JSON.stringify(body)}`);
  return ms;
}
const unknownEmail = () => `nobody-${randomBytes(6).toString('hex')}@example.test`;
// The first failures pay for the dummy hash and cold paths; not counted.
for (let i = 0; i < 3; i++) {
  await failedLogin(email);
  await failedLogin(unknownEmail());
}
const wrongMs = [];
const unknownMs = [];
// Alternating, so machine noise falls on both alike.
for (let i = 0; i < failedLogins; i++) {
  wrongMs.push(await failedLogin(email));
  unknownMs.push(await failedLogin(unknownEmail()));
}
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1));
};

console.log(
  JSON.stringify({
    bench: 'auth',
    figure: 'failed-login-timing',
    route: 'POST /auth/login (wrong password vs unknown email), one at a time',
    hash: `argon2id m=${config.PASSWORD_HASH_MEMORY_KIB} KiB t=${config.PASSWORD_HASH_ITERATIONS} p=1`,
    attempts: failedLogins,
    unknownP50Ms: quantile(unknownMs, 0.5),
    unknownP90Ms: quantile(unknownMs, 0.9),
    baselineP50Ms: quantile(wrongMs, 0.5),
    baselineP90Ms: quantile(wrongMs, 0.9),
    // About 1 when an unknown account costs what a wrong password does.
    ratio: Number((quantile(unknownMs, 0.5) / quantile(wrongMs, 0.5)).toFixed(3)),
    baseline: 'wrong password for an existing account, same process and run',
  }),
);

full.close();
await runtime.close();
await database?.drop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
