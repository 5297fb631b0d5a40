// BOM reads and exports at engineering scale (issue 37), against a collaboration host from the built
// dist (`pnpm build` first), real Postgres and RabbitMQ (BENCH_POSTGRES_URL, BENCH_AMQP_URL).
//
// Built through the service's own routes: 4,556 parts (a parts import), then 556 BOMs in 7 levels
// (created, lines added, submitted, approved), sub-assemblies shared, so the top BOM expands to
// about 20,400 lines (level 1 lists 6 sub-assemblies, every other level 3, each also 5 leaf parts; the
// deepest level 10 leaf parts). Then BENCH_REPS (15) rounds, each measuring in turn:
// - `bare expansion`: the whole expansion as one tuned recursive query (expansion-sql.mjs) on a `pg`
//   pool, rows to objects and nothing else: the floor of a tree read done in SQL;
// - `tree` GET /v1/boms/:id and `rollup` GET .../cost-rollup, each BENCH_READS_PER_ROUND (3) times a
//   round, every read a sample (a p95 of BENCH_REPS samples alone would be their slowest);
// - `export.csv`, `export.xlsx`, `export.erp.csv`, and `304 poll`: the ERP export once, then ten
//   conditional GETs with its ETag and Last-Modified, each a sample;
// - `where-used` (levels=all, a leaf used in every branch);
// p50/p95/max of each, the answer's bytes, and for the exports the peak RSS growth of the service
// process during the request (sampled every 5 ms). Then a BENCH_IMPORT_LINES (100,000) line
// single-level BOM import (POST /v1/boms/import, applied), against a raw `COPY bom_items FROM STDIN`
// of the same lines into another BOM, in the same run and database. JSON lines.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { benchSetup, call, percentile, pg, root, round2, rssOf, sleep, startCollab } from '../lib/collab.mjs';
import { bareExpansion } from './expansion-sql.mjs';

const { from: copyFrom } = createRequire(join(root, 'packages/platform/package.json'))('pg-copy-streams');
const require = createRequire(import.meta.url);
const { newId } = require('../../packages/platform/dist/ids.js');

const reps = Number(process.env.BENCH_REPS ?? 15);
const importLines = Number(process.env.BENCH_IMPORT_LINES ?? 100_000);
const POLLS_PER_ROUND = 10;
/** Tree reads and rollups per round, each a sample: a p95 of BENCH_REPS samples alone is their maximum. */
const READS_PER_ROUND = Number(process.env.BENCH_READS_PER_ROUND ?? 3);

// Assemblies per level (level 0 is the top); level L lists CHILDREN[L] assemblies of level L + 1.
const POOL = [1, 6, 18, 40, 80, 150, 261];
const CHILDREN = [6, 3, 3, 3, 3, 3, 0];
const LEAVES_PER_BOM = (level) => (level === POOL.length - 1 ? 10 : 5);
const LEAF_PARTS = 4_000;

const asmNumber = (level, i) => `ASM-${level}-${String(i).padStart(3, '0')}`;
const leafNumber = (i) => `LEAF-${String(i).padStart(5, '0')}`;

/** The parts file: assemblies without cost, leaves with a cost in EUR (one in a hundred without). */
function partsCsv() {
  const lines = ['part_number,name,domain,unit_cost,currency'];
  POOL.forEach((count, level) => {
    for (let i = 0; i < count; i++) lines.push(`${asmNumber(level, i)},Assembly ${level}.${i},other,,`);
  });
  for (let i = 0; i < LEAF_PARTS; i++) {
    const cost = i % 100 === 7 ? '' : ((i % 997) / 100 + 0.01).toFixed(2);
    lines.push(`${leafNumber(i)},Leaf ${i},other,${cost},${cost ? 'EUR' : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The lines of assembly `i` of `level`: its sub-assemblies, then its leaf parts (every third with designators). */
function linesOf(level, i, ids) {
  const items = [];
  for (let j = 0; j < CHILDREN[level]; j++) {
    const child = level === 0 ? j : (i * CHILDREN[level] + j) % POOL[level + 1];
    items.push({ childPartId: ids.get(asmNumber(level + 1, child)), qty: 1 + (j % 2) });
  }
  for (let j = 0; j < LEAVES_PER_BOM(level); j++) {
    const leaf = (level * 977 + i * 31 + j * 7) % LEAF_PARTS;
    const designated = j % 3 === 0;
    items.push({
      childPartId: ids.get(leafNumber(leaf)),
      qty: designated ? 2 : 4,
      ...(designated ? { refdes: `R${j * 2 + 1},R${j * 2 + 2}` } : {}),
    });
  }
  return items;
}

async function importParts(base, token, workspace) {
  const form = new FormData();
  form.set('workspace', workspace);
  form.set('file', new Blob([partsCsv()], { type: 'text/csv' }), 'parts.csv');
  const res = await fetch(`${base}/v1/parts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  if (!res.ok) throw new Error(`parts import answered ${res.status}: ${await res.text()}`);
}

async function partIds(base, token, workspace) {
  const ids = new Map();
  for (let page = 1; ; page++) {
    const list = await call(base, 'GET', `/v1/parts?workspace=${workspace}&page=${page}&pageSize=500`, token);
    for (const part of list.items) ids.set(part.partNumber, part.id);
    if (list.items.length < 500) return ids;
  }
}

/** Runs `work` over `items` with `width` at a time. */
async function inParallel(items, width, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

const agent = new http.Agent({ keepAlive: true });

/** READS_PER_ROUND requests one after another, each a sample. */
async function repeated(read) {
  const reads = [];
  for (let i = 0; i < READS_PER_ROUND; i++) reads.push(await read());
  return { ...reads.at(-1), samples: reads.map((r) => r.ms), statuses: reads.map((r) => r.status) };
}

/** A GET to the last byte: status, headers, bytes, milliseconds, and the peak RSS growth of `pid` meanwhile. */
function get(base, path, token, headers = {}, pid) {
  const url = new URL(path, base);
  const before = pid ? rssOf(pid) : 0;
  let peak = before;
  const sampler = pid ? setInterval(() => (peak = Math.max(peak, rssOf(pid))), 5) : undefined;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.get(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        agent,
        headers: { ...headers, authorization: `Bearer ${token}` },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk) => (bytes += chunk.length));
        res.on('end', () => {
          clearInterval(sampler);
          if (pid) peak = Math.max(peak, rssOf(pid));
          resolve({
            status: res.statusCode,
            headers: res.headers,
            bytes,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            rssGrowth: peak - before,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', (error) => {
      clearInterval(sampler);
      reject(error);
    });
  });
}

function figures(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: round2(percentile(sorted, 50)),
    p95: round2(percentile(sorted, 95)),
    max: round2(sorted.at(-1)),
  };
}

const setup = await benchSetup('bom');
const collabEnv = { ...setup.env, NODE_ENV: 'production', SESSION_SECRET: randomBytes(32).toString('hex') };
const collab = await startCollab(collabEnv);
const pool = new pg.Pool({ connectionString: setup.db.url, max: 2 });
let baselineProcess;
try {
  const owner = setup.user('owner');
  const workspace = `bom-${randomBytes(3).toString('hex')}`;
  await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });

  let started = performance.now();
  await importParts(collab.base, owner.token, workspace);
  const ids = await partIds(collab.base, owner.token, workspace);
  const assemblies = POOL.flatMap((count, level) => Array.from({ length: count }, (_, i) => [level, i]));
  const boms = new Map();
  await inParallel(assemblies, 4, async ([level, i]) => {
    const bom = await call(collab.base, 'POST', '/v1/boms', owner.token, {
      workspace,
      assemblyPartId: ids.get(asmNumber(level, i)),
      type: 'engineering',
      revision: 'A',
    });
    await call(collab.base, 'POST', `/v1/boms/${bom.id}/items`, owner.token, {
      items: linesOf(level, i, ids),
    });
    await call(collab.base, 'POST', `/v1/boms/${bom.id}/submit`, owner.token, {});
    await call(collab.base, 'POST', `/v1/boms/${bom.id}/approve`, owner.token, {});
    boms.set(asmNumber(level, i), bom.id);
  });
  const top = boms.get(asmNumber(0, 0));
  const [{ workspace_id: workspaceId }] = (
    await pool.query('SELECT workspace_id FROM boms WHERE id = $1', [top])
  ).rows;
  await pool.query('VACUUM ANALYZE');
  const tree = await call(collab.base, 'GET', `/v1/boms/${top}?workspace=${workspace}`, owner.token);
  console.log(
    JSON.stringify({
      bench: 'bom',
      step: 'built through the API',
      parts: ids.size,
      boms: boms.size,
      expandedLines: tree.tree?.length ?? tree.nodes?.length,
      seconds: round2((performance.now() - started) / 1000),
    }),
  );

  // A leaf every branch uses: where-used walks up every path to the top.
  const leaf = ids.get(leafNumber((6 * 977) % LEAF_PARTS));
  const treeRoot = {
    id: top,
    workspaceId,
    type: 'engineering',
    assemblyPartId: ids.get(asmNumber(0, 0)),
    assemblyPartNumber: asmNumber(0, 0),
  };
  const q = `workspace=${workspace}`;
  // BENCH_COLLAB_BASELINE: another build's main.js (a copy of dist) on the same database; its reads
  // are measured in the same rounds, alternating with this build's, labelled `(baseline)`.
  const baseline = process.env.BENCH_COLLAB_BASELINE
    ? await startCollab(collabEnv, process.env.BENCH_COLLAB_BASELINE)
    : undefined;
  baselineProcess = baseline;
  const reads = (service, label) => {
    const at = (path, headers, pid) => get(service.base, path, owner.token, headers, pid);
    const pid = service.child.pid;
    return {
      [`tree${label}`]: () => repeated(() => at(`/v1/boms/${top}?${q}`)),
      [`rollup${label}`]: () => repeated(() => at(`/v1/boms/${top}/cost-rollup?${q}`)),
      [`export.csv${label}`]: () => at(`/v1/boms/${top}/export.csv?${q}`, {}, pid),
      [`export.xlsx${label}`]: () => at(`/v1/boms/${top}/export.xlsx?${q}`, {}, pid),
      [`export.erp.csv${label}`]: () => at(`/v1/boms/${top}/export.erp.csv?${q}`, {}, pid),
      // An ERP system polling an unchanged BOM: the export once (not timed), then POLLS_PER_ROUND
      // conditional GETs with its validators, each a sample (a p95 over a dozen samples would be
      // the slowest one).
      [`304 poll${label}`]: async () => {
        const first = await at(`/v1/boms/${top}/export.erp.csv?${q}`);
        const polls = [];
        for (let i = 0; i < POLLS_PER_ROUND; i++) {
          polls.push(
            await at(`/v1/boms/${top}/export.erp.csv?${q}`, {
              ...(first.headers.etag ? { 'if-none-match': first.headers.etag } : {}),
              ...(first.headers['last-modified']
                ? { 'if-modified-since': first.headers['last-modified'] }
                : {}),
            }),
          );
        }
        return {
          ...polls.at(-1),
          samples: polls.map((poll) => poll.ms),
          statuses: polls.map((p) => p.status),
        };
      },
      [`where-used${label}`]: () => at(`/v1/parts/${leaf}/where-used?${q}&levels=all`),
    };
  };
  const current = reads(collab, '');
  const before = baseline ? reads(baseline, ' (baseline)') : {};
  const kinds = {
    'bare expansion': async () => {
      const t = performance.now();
      const rows = await bareExpansion(pool, treeRoot);
      return { ms: performance.now() - t, rows: rows.length };
    },
  };
  for (const name of Object.keys(current)) {
    kinds[name] = current[name];
    if (before[`${name} (baseline)`]) kinds[`${name} (baseline)`] = before[`${name} (baseline)`];
  }
  const samples = Object.fromEntries(
    Object.keys(kinds).map((k) => [k, { ms: [], bytes: 0, rss: [], statuses: new Set() }]),
  );
  for (const run of Object.values(kinds)) await run(); // warm up (JIT, caches)
  for (let r = 0; r < reps; r++) {
    for (const [name, run] of Object.entries(kinds)) {
      const result = await run();
      samples[name].ms.push(...(result.samples ?? [result.ms]));
      samples[name].bytes = result.bytes ?? result.rows;
      if (result.rssGrowth !== undefined) samples[name].rss.push(result.rssGrowth);
      for (const status of result.statuses ?? [result.status]) if (status) samples[name].statuses.add(status);
    }
  }
  const bare = figures(samples['bare expansion'].ms);
  for (const [name, s] of Object.entries(samples)) {
    const f = figures(s.ms);
    console.log(
      JSON.stringify({
        bench: 'bom',
        kind: name,
        ...f,
        ...(name === 'bare expansion' ? { rows: s.bytes } : { bytes: s.bytes, statuses: [...s.statuses] }),
        ...(name === 'bare expansion' ? {} : { p50VsBare: round2(f.p50 / bare.p50) }),
        ...(s.rss.length ? { peakRssGrowthMB: round2(Math.max(...s.rss) / 2 ** 20) } : {}),
      }),
    );
  }

  // A 100,000-line single-level BOM: the import, then a raw COPY of the same lines into another BOM.
  const flat = async (n) => {
    const pn = `FLAT-${n}`;
    const part = await call(collab.base, 'POST', '/v1/parts', owner.token, {
      workspace,
      partNumber: pn,
      name: pn,
    });
    return call(collab.base, 'POST', '/v1/boms', owner.token, {
      workspace,
      assemblyPartId: part.id,
      type: 'engineering',
      revision: 'A',
    });
  };
  const [importBom, copyBom] = [await flat(1), await flat(2)];
  const leafOf = (i) => (i * 13) % LEAF_PARTS;
  const csv = ['part_number,qty,uom'];
  for (let i = 0; i < importLines; i++) csv.push(`${leafNumber(leafOf(i))},${1 + (i % 4)},each`);
  await pool.query('CHECKPOINT');
  const form = new FormData();
  form.set('workspace', workspace);
  form.set('bomId', importBom.id);
  form.set('file', new Blob([`${csv.join('\n')}\n`], { type: 'text/csv' }), 'bom.csv');
  started = performance.now();
  const imported = await fetch(`${collab.base}/v1/boms/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}` },
    body: form,
  });
  const importMs = performance.now() - started;
  const importBody = await imported.text();
  if (!imported.ok) throw new Error(`BOM import answered ${imported.status}: ${importBody.slice(0, 500)}`);

  await pool.query('CHECKPOINT');
  const client = await pool.connect();
  started = performance.now();
  try {
    const copy = client.query(
      copyFrom('COPY bom_items (id, bom_id, child_part_id, qty, uom, sort_index) FROM STDIN'),
    );
    const lines = [];
    for (let i = 0; i < importLines; i++) {
      lines.push(
        `${newId()}\t${copyBom.id}\t${ids.get(leafNumber(leafOf(i)))}\t${1 + (i % 4)}\teach\t${i}\n`,
      );
    }
    await pipeline(
      (async function* () {
        for (let i = 0; i < lines.length; i += 5_000) yield lines.slice(i, i + 5_000).join('');
      })(),
      copy,
    );
  } finally {
    client.release();
  }
  const copyMs = performance.now() - started;
  const [{ count }] = (
    await pool.query('SELECT count(*)::int AS count FROM bom_items WHERE bom_id = $1', [importBom.id])
  ).rows;
  console.log(
    JSON.stringify({
      bench: 'bom',
      kind: `import of ${importLines} lines`,
      importMs: round2(importMs),
      copyMs: round2(copyMs),
      ratio: round2(importMs / copyMs),
      linesStored: count,
    }),
  );
} finally {
  await pool.end();
  await collab.stop();
  await baselineProcess?.stop();
  await sleep(100);
  await setup.close();
}
