// Parts search of the collaboration host, from the built dist (`pnpm build` first), against real
// Postgres and RabbitMQ (BENCH_POSTGRES_URL, BENCH_AMQP_URL; defaults: the local test servers).
//
// BENCH_PARTS (200,000) parts in one workspace (seeded with SQL, then VACUUM ANALYZE); `BENCH_PARTS=1000000`
// is the million-part run of issue 37 (targets: prefix p95 < 20 ms and <= 1.5x the bare server, common word
// p95 < 50 ms; ~2 minutes of seeding, ~1 GB of database). For each query kind,
// BENCH_QUERIES (200) sequential `GET /v1/parts?workspace&q=` requests (node:http, keep-alive, page size 50
// unless the kind says)
// with varying terms, and, in the same run, the same SQL the service runs for them (the page with
// the count) straight on the database with one `pg` client, and the same SQL behind a bare node:http
// server (bare-server.mjs: the floor of any HTTP service of this SQL on this machine). Figures: p50/p95
// of the three, the service's ratios to the SQL and to the bare server, the service's CPU time per
// request (all its threads), the plan's index use. Query kinds:
// - prefix: a part-number prefix matching 100 parts (`prt-00123`);
// - prefix, sorted last, page of 5: the same for the parts that sort last (`prt-01999`; `prt-09999` of a
//   million), as a type-ahead asks for them;
// - prefix, 10,000 matches sorting late: a short prefix (`prt-019`; `prt-099`) whose matches follow
//   all but 10,000 parts in sort order;
// - containment, selective: a name fragment matching ~1.4% of the parts (`m4x16`);
// - containment, common: a word in 10% of the names (`washer`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  benchSetup,
  call,
  cpuMicrosOf,
  freePort,
  percentile,
  pg,
  round2,
  startCollab,
  stopChild,
  timedRequest,
} from '../lib/collab.mjs';
import { search } from './search-sql.mjs';

const parts = Number(process.env.BENCH_PARTS ?? 200_000);
const queries = Number(process.env.BENCH_QUERIES ?? 200);
// Requests of each kind before the measured ones: the figures are of a warmed server (JIT), not of
// its first requests.
const WARMUP = Number(process.env.BENCH_SEARCH_WARMUP ?? 300);

// Each kind: its terms and its page size.
const KINDS = {
  prefix: { term: (i) => `PRT-${String((i * 37) % Math.floor(parts / 100)).padStart(5, '0')}`, pageSize: 50 },
  'prefix, sorted last, page of 5': {
    term: (i) => `PRT-${String(Math.floor(parts / 100) - 1 - (i % 10)).padStart(5, '0')}`,
    pageSize: 5,
  },
  'prefix, 10,000 matches sorting late': {
    term: (i) => `PRT-0${String(Math.floor(parts / 10_000) - 1 - (i % 4)).padStart(2, '0')}`,
    pageSize: 50,
  },
  'containment (selective)': { term: (i) => ['m4x16', 'm3x12', 'm5x20', 'm6x25'][i % 4], pageSize: 50 },
  'containment (common)': { term: (i) => ['washer', 'bracket', 'gasket', 'spring'][i % 4], pageSize: 50 },
};

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

const setup = await benchSetup('parts-search');
let collab;
let bare;
try {
  collab = await startCollab(setup.env);
  const owner = setup.user('owner');
  const authToken = owner.token;
  await call(collab.base, 'GET', '/api/session', authToken);
  const workspace = `bench-${randomBytes(4).toString('hex')}`;
  const { id: workspaceId } = await call(collab.base, 'POST', '/v1/workspaces', authToken, {
    name: workspace,
  });

  const client = new pg.Client({ connectionString: setup.db.url });
  await client.connect();
  const seedStarted = performance.now();
  await client.query(
    `INSERT INTO parts (id, workspace_id, part_number, name, description, domain, uom, lifecycle, tags, attributes,
                        manufacturer_name, manufacturer_part_number, unit_cost, currency, created_by)
     SELECT gen_random_uuid(), $1, 'PRT-' || lpad(i::text, 7, '0'),
            (ARRAY['Hex bolt', 'Flat washer', 'Resistor', 'Capacitor', 'Angle bracket', 'Harness', 'Gasket',
                   'Compression spring', 'Connector', 'Label'])[1 + i % 10]
              || ' M' || (3 + i % 4) || 'x' || (12 + 4 * (i % 5) + (i % 7)) || ' rev ' || (i % 13),
            '', (ARRAY['mechanical', 'electronic', 'electrical', 'chemical', 'other'])[1 + i % 5], 'each',
            'prototype', ARRAY['bench', 'batch-' || (i % 50)], '{}'::jsonb, 'Acme', 'MPN' || i, (i % 1000) / 10.0,
            'EUR', $2
       FROM generate_series(1, $3::int) AS i`,
    [workspaceId, owner.id, parts],
  );
  // As autovacuum leaves a table after a bulk insert, and written out, so neither autovacuum nor the
  // checkpoint of the seed runs during the measurement.
  await client.query('VACUUM ANALYZE parts');
  await client.query('CHECKPOINT');
  const seedMs = performance.now() - seedStarted;

  const barePort = await freePort();
  bare = spawn(process.execPath, [new URL('bare-server.mjs', import.meta.url).pathname], {
    env: {
      ...process.env,
      DB_URL: setup.db.url,
      WORKSPACE_ID: workspaceId,
      PORT: String(barePort),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve) => bare.stdout.once('data', resolve));
  const bareBase = `http://127.0.0.1:${barePort}`;

  const results = [];
  // BENCH_SEARCH_KINDS: a semicolon-separated subset of the kinds (all by default; names hold commas).
  const only = process.env.BENCH_SEARCH_KINDS?.split(';');
  for (const [kind, { term: termOf, pageSize }] of Object.entries(KINDS).filter(
    ([k]) => !only || only.includes(k),
  )) {
    const http = [];
    const floor = [];
    const raw = [];
    let matches = 0;
    let cpuAtStart = 0;
    // The service, the bare server and the SQL alone take each term in turn, so all see the same machine.
    for (let i = 0; i < WARMUP + queries; i++) {
      if (i === WARMUP) cpuAtStart = cpuMicrosOf(collab.child.pid);
      const q = termOf(i);
      const res = await timedRequest(
        collab.base,
        'GET',
        `/v1/parts?workspace=${workspace}&q=${encodeURIComponent(q)}&pageSize=${pageSize}`,
        { token: authToken },
      );
      if (res.status !== 200) throw new Error(`search answered ${res.status}: ${res.body}`);
      if (i >= WARMUP) http.push(res.ms);
      matches = JSON.parse(res.body).total;
      const served = await timedRequest(bareBase, 'GET', `/?q=${encodeURIComponent(q)}&pageSize=${pageSize}`);
      if (served.status !== 200) throw new Error(`the bare server answered ${served.status}`);
      if (i >= WARMUP) floor.push(served.ms);

      const started = performance.now();
      await search(client, workspaceId, q, pageSize);
      if (i >= WARMUP) raw.push(performance.now() - started);
    }
    const serviceCpuMs = (cpuMicrosOf(collab.child.pid) - cpuAtStart) / 1000 / queries;
    // The indexes the statements read for the first term (a branch turned off never runs).
    const { statements, params } = await search(client, workspaceId, termOf(0), pageSize);
    const plans = [];
    for (const statement of statements) {
      const plan = await client.query(`EXPLAIN (ANALYZE, TIMING OFF) ${statement}`, params);
      plans.push(...plan.rows);
    }
    const indexes = [
      ...new Set(
        plans
          .map((r) => r['QUERY PLAN'])
          .filter((line) => !line.includes('never executed'))
          .flatMap((line) =>
            [...line.matchAll(/(?:Index|Bitmap Index) Scan (?:using|on) (\w+)/g)].map((m) => m[1]),
          ),
      ),
    ];
    const h = summary(http);
    const b = summary(floor);
    const r = summary(raw);
    results.push({
      bench: 'parts-search',
      kind,
      parts,
      queries,
      pageSize,
      matchesOfFirstTerm: matches,
      httpP50Ms: round2(h.p50),
      httpP95Ms: round2(h.p95),
      sqlP50Ms: round2(r.p50),
      sqlP95Ms: round2(r.p95),
      p50Ratio: round2(h.p50 / r.p50),
      p95Ratio: round2(h.p95 / r.p95),
      bareP50Ms: round2(b.p50),
      bareP95Ms: round2(b.p95),
      bareP95Ratio: round2(b.p95 / r.p95),
      p95RatioToBare: round2(h.p95 / b.p95),
      serviceCpuMsPerRequest: round2(serviceCpuMs),
      indexesUsed: indexes,
    });
  }
  await client.end();
  for (const result of results) console.log(JSON.stringify({ ...result, seedMs: Math.round(seedMs) }));
} finally {
  if (bare) await stopChild(bare);
  await collab?.stop();
  await setup.close();
}
process.exit(0);
