// SSE fan-out of the collaboration host, from the built dist (`pnpm build` first), against real
// Postgres and RabbitMQ (BENCH_POSTGRES_URL, BENCH_AMQP_URL; defaults: the local test servers).
//
// BENCH_CLIENTS (2,000) streams of one workspace, BENCH_EVENTS (100) events. Each event is a real
// request, PATCH /v1/workspaces/:name/members/:username (a role change emits an `update` event);
// the next is sent once every client has the previous one. Figures:
// - delivery latency p50/p99: from sending the PATCH to a client reading the event, over all
//   clients and events;
// - memory per connection: RSS growth of the server process(es) while the streams open, / clients.
// Scenarios: one collaboration process; two processes (clients split evenly, events emitted on the
// first). Either way each event goes outbox -> relay -> RabbitMQ -> every process's broadcast
// queue -> its streams. Baseline, in the same run: a bare Node http SSE server (bare-server.mjs)
// writing the same message to the same number of streams, triggered by a POST. Each run starts with
// BENCH_WARMUP_EVENTS (10) unmeasured rounds. Services run as child processes (their RSS is theirs
// alone); tokens come from a local JWKS issuer, so the API host is not needed. JSON lines.
// BENCH_QUIET_CLIENTS (0) more streams, of another workspace that gets no events, open during the
// rounds (not counted in the figures): the service's heartbeats to them must not delay the events of
// the busy streams (the bare server sends no heartbeats).
// BENCH_ROUNDS_OUT=1 also prints each round's p50/p99/max, first delivery and trigger time to stderr.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import {
  benchSetup,
  call,
  percentile,
  pg,
  round2,
  rssOf,
  sleep,
  startCollab,
  stopChild,
} from '../lib/collab.mjs';

const { Client } = pg;

const clients = Number(process.env.BENCH_CLIENTS ?? 2000);
const quietClients = Number(process.env.BENCH_QUIET_CLIENTS ?? 0);
const events = Number(process.env.BENCH_EVENTS ?? 100);
const ROUND_TIMEOUT_MS = 30_000;
/** Rounds before the measured ones (JIT, connection pools), run the same way and discarded. */
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_EVENTS ?? 10);

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

async function startBare() {
  // BENCH_NODE_FLAGS apply to the bare server too (e.g. --cpu-prof), so both sides are measured alike.
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...flags, new URL('./bare-server.mjs', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise((resolve) =>
    child.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
  );
  return { base: `http://127.0.0.1:${port}`, child, stop: () => stopChild(child) };
}

/**
 * One SSE client: counts `update` messages and records, for each, how long after the trigger of
 * its round it arrived.
 */
function openStream(url, headers, onUpdate) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream answered ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let pending = '';
      let ready = false;
      res.on('data', (chunk) => {
        pending += chunk;
        let end = pending.indexOf('\n\n');
        while (end >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (!ready && block.startsWith('retry:')) {
            ready = true;
            resolve({ close: () => req.destroy() });
          } else if (block.includes('\nevent: update\n')) {
            onUpdate();
          }
          end = pending.indexOf('\n\n');
        }
      });
    });
    req.end();
  });
}

/**
 * Opens `clients` streams spread over `urls`, then runs `events` rounds of `trigger()`, each waiting
 * for every client to get the round's event. Returns latencies (ms) and RSS growth of `pids`.
 */
async function fanOut({ urls, quietUrls, headers, pids, trigger }) {
  let round = 0;
  let sentAt = 0;
  let received = 0;
  let roundDone = () => {};
  const latencies = new Float64Array(clients * (events + WARMUP_ROUNDS));
  const triggers = [];
  let samples = 0;
  const onUpdate = () => {
    latencies[samples++] = performance.now() - sentAt;
    received++;
    if (received === clients) roundDone();
  };

  const rssBefore = pids.map(rssOf);
  const streams = [];
  const connectStart = performance.now();
  for (let i = 0; i < clients; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(clients, i + 100); j++)
      batch.push(openStream(urls[j % urls.length], headers, onUpdate));
    streams.push(...(await Promise.all(batch)));
  }
  const connectMs = performance.now() - connectStart;
  await sleep(1000);
  const rssAfter = pids.map(rssOf);
  for (let i = 0; i < quietClients; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(quietClients, i + 100); j++)
      batch.push(openStream(quietUrls[j % quietUrls.length], headers, () => {}));
    streams.push(...(await Promise.all(batch)));
  }

  for (round = 1; round <= events + WARMUP_ROUNDS; round++) {
    if (round === WARMUP_ROUNDS + 1) {
      samples = 0;
      triggers.length = 0;
    }
    received = 0;
    const done = new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`round ${round}: ${received}/${clients} clients got the event`)),
        ROUND_TIMEOUT_MS,
      );
      roundDone = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    sentAt = performance.now();
    await trigger(round);
    triggers.push(performance.now() - sentAt);
    await done;
    if (process.env.BENCH_ROUNDS_OUT) {
      const mine = Array.from(latencies.subarray(samples - clients, samples)).sort((a, b) => a - b);
      const ms = (p) => Math.round(percentile(mine, p));
      const trigger = Math.round(triggers[triggers.length - 1]);
      console.error(
        `round ${round} p50 ${ms(50)} p99 ${ms(99)} max ${ms(100)} first ${ms(0)} trigger ${trigger}`,
      );
    }
  }
  for (const stream of streams) stream.close();
  const sorted = Array.from(latencies.subarray(0, samples)).sort((a, b) => a - b);
  triggers.sort((a, b) => a - b);
  const rssDelta = rssAfter.reduce((sum, rss, i) => sum + rss - rssBefore[i], 0);
  return {
    p50Ms: round2(percentile(sorted, 50)),
    p99Ms: round2(percentile(sorted, 99)),
    maxMs: round2(sorted[sorted.length - 1]),
    triggerP50Ms: round2(percentile(triggers, 50)),
    bytesPerConnection: Math.round(rssDelta / clients),
    connectMs: Math.round(connectMs),
  };
}

const setup = await benchSetup('sse-fanout');
const children = [];
try {
  const env = {
    ...setup.env,
    SSE_MAX_CONNECTIONS_PER_USER: String(clients + quietClients + 10),
  };

  // Baseline first: the bare server with the same clients and triggers.
  const bare = await startBare();
  children.push(bare);
  const baseline = await fanOut({
    urls: [`${bare.base}/events`],
    quietUrls: [`${bare.base}/events?quiet`],
    headers: {},
    pids: [bare.child.pid],
    trigger: () => call(bare.base, 'POST', '/emit', ''),
  });
  await bare.stop();

  // The workspace: an owner who watches (one user, so presence is announced once) and a member
  // whose role the owner toggles.
  const owner = setup.user('owner');
  const member = setup.user('member');
  const workspace = `bench-${randomBytes(4).toString('hex')}`;

  async function scenario(processes) {
    const started = [];
    for (let i = 0; i < processes; i++) started.push(await startCollab(env));
    children.push(...started);
    const [first] = started;
    await call(first.base, 'GET', '/api/session', owner.token);
    const { user: memberUser } = await call(first.base, 'GET', '/api/session', member.token);
    const ws = await fetch(`${first.base}/v1/workspaces/${workspace}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    if (ws.status === 404) {
      const created = await call(first.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });
      const pg = new Client({ connectionString: setup.db.url });
      await pg.connect();
      await pg.query(
        `INSERT INTO workspace_members (workspace_id, user_id, role, joined_at) VALUES ($1, $2, 'viewer', now())`,
        [created.id, member.id],
      );
      await pg.end();
      if (quietClients > 0)
        await call(first.base, 'POST', '/v1/workspaces', owner.token, { name: `${workspace}-quiet` });
    }
    const result = await fanOut({
      urls: started.map((p) => `${p.base}/v1/events?workspace=${workspace}`),
      quietUrls: started.map((p) => `${p.base}/v1/events?workspace=${workspace}-quiet`),
      headers: { authorization: `Bearer ${owner.token}` },
      pids: started.map((p) => p.child.pid),
      trigger: (round) =>
        call(first.base, 'PATCH', `/v1/workspaces/${workspace}/members/${memberUser.username}`, owner.token, {
          role: round % 2 ? 'engineer' : 'viewer',
        }),
    });
    for (const p of started) await p.stop();
    return result;
  }

  const one = await scenario(1);
  const two = await scenario(2);
  for (const [name, processes, measured] of [
    ['one process', 1, one],
    ['two processes', 2, two],
  ]) {
    console.log(
      JSON.stringify({
        bench: 'sse-fanout',
        scenario: name,
        processes,
        clients,
        quietClients,
        events,
        p50Ms: measured.p50Ms,
        p99Ms: measured.p99Ms,
        maxMs: measured.maxMs,
        triggerP50Ms: measured.triggerP50Ms,
        bytesPerConnection: measured.bytesPerConnection,
        connectMs: measured.connectMs,
        baselineP50Ms: baseline.p50Ms,
        baselineP99Ms: baseline.p99Ms,
        baselineTriggerP50Ms: baseline.triggerP50Ms,
        baselineBytesPerConnection: baseline.bytesPerConnection,
        p99Ratio: round2(measured.p99Ms / baseline.p99Ms),
        memoryRatio: round2(measured.bytesPerConnection / baseline.bytesPerConnection),
        baseline: 'bare node:http SSE server, same clients, same message, triggered by POST',
      }),
    );
  }
} finally {
  for (const child of children) await child.stop();
  agent.destroy();
  await setup.close();
}
process.exit(0);
