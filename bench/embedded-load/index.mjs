// The embedded default vs the same runner on the machine's Postgres: requests per second and p99 of
// a mixed read/write load (both hosts, 10 users, 50 concurrent), measured in the same run; plus the
// cold start of the README's first line (first start with initdb, then a warm restart).
// Run after `pnpm build`: node bench/embedded-load/index.mjs [seconds] [concurrency]
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../lib/collab.mjs';
import { postgresUrl, throwawayDatabase } from '../lib/postgres.mjs';

const root = join(new URL('.', import.meta.url).pathname, '..', '..');
const runnerScript = join(root, 'services/embedded/dist/main.js');
const seconds = Number(process.argv[2] ?? 15);
const concurrency = Number(process.argv[3] ?? 50);
const USERS = 10;

async function up(url) {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false;
  }
}

/** Starts the runner and resolves once both hosts answer /healthz, with the time that took. */
async function startRunner(env) {
  const ports = { api: await freePort(), collab: await freePort() };
  const started = performance.now();
  const child = spawn(process.execPath, [runnerScript], {
    env: {
      PATH: process.env.PATH,
      API_PORT: String(ports.api),
      COLLAB_PORT: String(ports.collab),
      LOG_LEVEL: 'warn',
      AUTH_REQUIRE_CONFIRMATION: 'false',
      RATE_LIMIT_STANDARD_PER_WINDOW: '1000000000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const api = `http://127.0.0.1:${ports.api}`;
  const collab = `http://127.0.0.1:${ports.collab}`;
  while (!((await up(`${api}/healthz`)) && (await up(`${collab}/healthz`)))) {
    if (child.exitCode !== null) throw new Error(`runner exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const startMs = performance.now() - started;
  const stop = async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    return exited;
  };
  return { api, collab, startMs, stop };
}

async function send(base, method, path, token, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

async function users(runner, tag) {
  const list = [];
  for (let n = 0; n < USERS; n++) {
    const email = `bench-${tag}-${n}@example.test`;
    await send(runner.api, 'POST', '/auth/signup', null, { email, password: 'bench password' });
    const login = await send(runner.api, 'POST', '/auth/login', null, { email, password: 'bench password' });
    const token = login.session.access_token;
    await send(runner.collab, 'POST', '/v1/users/init', token, {});
    const workspace = `bench-${tag}-${n}`;
    await send(runner.collab, 'POST', '/v1/workspaces', token, { name: workspace });
    const parts = [];
    for (let i = 0; i < 20; i++) {
      const part = await send(runner.collab, 'POST', '/v1/parts', token, {
        workspace,
        partNumber: `P${n}-${i}`,
        name: `Bracket ${i}`,
      });
      parts.push(part.id);
    }
    list.push({ n, token, workspace, parts, created: 0 });
  }
  return list;
}

/** Reads and writes on both hosts, in the proportions of a working day: 3 of 10 requests write. */
function mixed(runner, user, k) {
  const part = user.parts[k % user.parts.length];
  switch (k % 10) {
    case 0:
      return send(runner.api, 'GET', '/profile', user.token);
    case 1:
      return send(runner.api, 'GET', '/tenant/current', user.token);
    case 2:
    case 3:
      return send(runner.collab, 'GET', `/v1/parts?workspace=${user.workspace}&q=P${user.n}-1`, user.token);
    case 4:
    case 5:
      return send(runner.collab, 'GET', `/v1/parts/${part}?workspace=${user.workspace}`, user.token);
    case 6:
      return send(runner.collab, 'GET', `/v1/workspaces`, user.token);
    case 7:
    case 8:
      user.created++;
      return send(runner.collab, 'POST', '/v1/parts', user.token, {
        workspace: user.workspace,
        partNumber: `L${user.n}-${process.hrtime.bigint()}`,
        name: 'Load part',
      });
    default:
      return send(runner.collab, 'PATCH', `/v1/parts/${part}?workspace=${user.workspace}`, user.token, {
        workspace: user.workspace,
        description: `revised ${k}`,
      });
  }
}

async function load(runner, list) {
  const latencies = [];
  let errors = 0;
  let k = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const i = k++;
      const started = performance.now();
      try {
        await mixed(runner, list[i % list.length], i);
        latencies.push(performance.now() - started);
      } catch (error) {
        errors++;
        if (errors <= 3) console.error(String(error));
      }
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - began) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return {
    rps: Math.round(latencies.length / elapsed),
    p50Ms: Number(at(0.5).toFixed(1)),
    p99Ms: Number(at(0.99).toFixed(1)),
    errors,
  };
}

async function measure(label, env) {
  const runner = await startRunner(env);
  const list = await users(runner, label);
  await load(runner, list); // warm-up, also fills the tables a little
  const result = await load(runner, list);
  const code = await runner.stop();
  return { ...result, exit: code };
}

// Cold start: a fresh data folder (initdb, migrations), then a warm restart of the same folder.
const dataDir = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
chmodSync(dataDir, 0o755); // as root the embedded server runs as `postgres`, which must enter it
const cold = await startRunner({ DATA_DIR: dataDir });
await cold.stop();
const warm = await startRunner({ DATA_DIR: dataDir });
await warm.stop();
console.log(
  JSON.stringify({
    bench: 'embedded-load',
    phase: 'start',
    coldStartMs: Math.round(cold.startMs),
    warmStartMs: Math.round(warm.startMs),
    target: 'both /healthz within 5000 ms',
  }),
);

// Alternate the two so machine noise hits both.
const database = await throwawayDatabase('bench_el');
const results = { embedded: [], postgres: [] };
for (let round = 0; round < 2; round++) {
  results.embedded.push(await measure(`e${round}`, { DATA_DIR: dataDir }));
  results.postgres.push(await measure(`p${round}`, { DATA_DIR: dataDir, DATABASE_URL: database.url }));
}
const best = (list, key, pick) => list.map((r) => r[key]).reduce((a, b) => pick(a, b));
const embeddedRps = best(results.embedded, 'rps', Math.max);
const postgresRps = best(results.postgres, 'rps', Math.max);
const embeddedP99 = best(results.embedded, 'p99Ms', Math.min);
const postgresP99 = best(results.postgres, 'p99Ms', Math.min);
console.log(
  JSON.stringify({
    bench: 'embedded-load',
    phase: 'mixed',
    seconds,
    concurrency,
    users: USERS,
    embedded: results.embedded,
    postgres: results.postgres,
    rpsRatio: Number((embeddedRps / postgresRps).toFixed(3)),
    p99Ratio: Number((postgresP99 / embeddedP99).toFixed(3)),
    target: 'rpsRatio >= 0.8 (same engine)',
  }),
);

await database.drop();
const admin = new pg.Client({ connectionString: postgresUrl });
await admin.connect();
const name = new URL(database.url).pathname.slice(1);
for (const db of [`${name}_api`, `${name}_collab`])
  await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
await admin.end();
rmSync(dataDir, { recursive: true, force: true });
