// Shared by the benches of the collaboration host: a local token issuer, collaboration processes from
// the built dist, HTTP calls and figures.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { throwawayDatabase } from './postgres.mjs';

export const root = new URL('../../', import.meta.url).pathname;
/** The `pg` driver the services use. */
export const pg = createRequire(join(root, 'packages/platform/package.json'))('pg');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const round2 = (n) => Math.round(n * 100) / 100;

/** RSS of a process in bytes (Linux). */
export function rssOf(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** CPU time (user + system) a process has used so far, in microseconds (Linux /proc, all its threads). */
export function cpuMicrosOf(pid) {
  // Fields after the command (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * A local access-token issuer (RS256 key, JWKS on a port of its own), so the API host is not needed:
 * `token(userId, email)` signs an access token the collaboration host accepts.
 */
export async function startIssuer() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(8).toString('hex');
  const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] };
  const server = createServer((req, res) => {
    // The API host's list of ended sessions, which the collaboration host reads before trusting tokens.
    const body = req.url === '/auth/sessions/revoked' ? { items: [], as_of: new Date().toISOString() } : jwks;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const jwksUrl = `http://127.0.0.1:${server.address().port}/.well-known/jwks.json`;
  function token(userId, email) {
    const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64({
      sub: userId,
      email,
      session_id: randomUUID(),
      iss: 'hwp-api',
      aud: 'authenticated',
      iat: now,
      exp: now + 3600,
    })}`;
    return `${body}.${sign('sha256', Buffer.from(body), privateKey).toString('base64url')}`;
  }
  return { jwksUrl, token, close: () => server.close() };
}

export function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitHealthy(base, child) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${base} did not come up`);
    await sleep(100);
  }
}

/** A collaboration process from services/collab-service/dist, on a free port. */
export async function startCollab(env, mainFile) {
  const port = await freePort();
  // BENCH_NODE_FLAGS: extra node flags for the service processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  // BENCH_COLLAB_MAIN: another build's main.js (a copy of dist, for a before/after comparison).
  // `mainFile`: a bench running two builds side by side names the second one itself.
  const main =
    mainFile ?? process.env.BENCH_COLLAB_MAIN ?? join(root, 'services/collab-service/dist/main.js');
  const child = spawn(process.execPath, [...flags, main], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', process.env.BENCH_SERVICE_STDOUT ? 'inherit' : 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, child);
  return { base, child, stop: () => stopChild(child) };
}

export function stopChild(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function call(base, method, path, authToken, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${authToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

export const amqpUrl = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * What a collaboration bench runs on: a token issuer, a throwaway database, a data folder and the
 * environment for `startCollab`. `user()` is a new user with a token; `close()` removes it all.
 */
export async function benchSetup(name) {
  const issuer = await startIssuer();
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const db = await throwawayDatabase(`bench_${name.replaceAll('-', '_')}`);
  const env = {
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    AMQP_URL: amqpUrl,
    AMQP_NAMESPACE: `bench-${randomBytes(4).toString('hex')}.`,
    AMQP_QUEUE_EXPIRES_MS: '300000',
    AUTH_JWKS_URL: issuer.jwksUrl,
  };
  return {
    db,
    env,
    user(role = 'user') {
      const user = { id: randomUUID(), email: `${role}-${randomBytes(3).toString('hex')}@bench.test` };
      return { ...user, token: issuer.token(user.id, user.email) };
    },
    async close() {
      issuer.close();
      // BENCH_KEEP_DB=1: the database stays, for looking into with psql afterwards.
      if (process.env.BENCH_KEEP_DB) console.error(`kept ${db.url}`);
      else await db.drop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/**
 * One request over a keep-alive node:http agent: a lighter client than fetch (undici), so that a
 * burst measures the server rather than the client sharing its cores. Resolves with the status, the
 * body and the milliseconds from send to the last byte.
 */
export function timedRequest(base, method, path, { token, body } = {}) {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = payload.length;
  }
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers,
        agent: keepAlive,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
