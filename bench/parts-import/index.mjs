// Parts import of the collaboration host, from the built dist (`pnpm build` first), against real
// Postgres and RabbitMQ (BENCH_POSTGRES_URL, BENCH_AMQP_URL; defaults: the local test servers).
//
// A BENCH_ROWS (100,000) row CSV of varied parts (every domain, tags, JSON attributes, costs) is
// sent to POST /v1/parts/import as a dry run, then BENCH_ROUNDS (3) times applied into an empty
// workspace. Baseline, in the same run and database, before each apply: a raw `COPY parts FROM STDIN`
// of the same rows (already converted to table columns) into another empty workspace, with the same
// indexes. A checkpoint precedes every timed step. Figures: wall-clock of each import request, the
// median of the apply/COPY ratios of the rounds, and the peak RSS of the collaboration process
// (VmHWM, worker thread included) measured in a fresh process per import. JSON lines.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { benchSetup, call, pg, root, round2, rssOf, startCollab } from '../lib/collab.mjs';

const { from: copyFrom } = createRequire(join(root, 'packages/platform/package.json'))('pg-copy-streams');
// Ids as the service makes them (its own UUIDv7: time-ordered, so index inserts land near each other).
const { newId } = createRequire(import.meta.url)('../../packages/platform/dist/ids.js');
const rows = Number(process.env.BENCH_ROWS ?? 100_000);

/** Peak resident set of a process so far, in bytes (Linux). */
function peakRssOf(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

const DOMAINS = ['mechanical', 'electronic', 'electrical', 'chemical', 'other'];
const ATTRIBUTES = {
  mechanical: (i) => ({
    material: ['steel', 'aluminium', 'PA66'][i % 3],
    finish: 'anodised',
    tolerance: '0.05',
  }),
  electronic: (i) => ({ package: '0603', value: `${i % 1000}k`, voltage_rating: '50V' }),
  electrical: (i) => ({ wire_gauge: 18 + (i % 6), connector_type: 'JST-XH', voltage: '24V' }),
  chemical: () => ({ cas_number: '7732-18-5', concentration: '99%', hazard_class: 'none' }),
  other: () => ({}),
};

/** Row `i` as the import's CSV fields. */
function part(i) {
  const domain = DOMAINS[i % DOMAINS.length];
  return {
    part_number: `BEN-${String(i).padStart(7, '0')}`,
    name: `${['Bracket', 'Resistor', 'Harness', 'Adhesive', 'Label'][i % 5]} ${i}`,
    description: `Benchmark part number ${i}`,
    domain,
    uom: 'each',
    tags: ['bench', `batch-${i % 50}`],
    attributes: ATTRIBUTES[domain](i),
    unit_cost: ((i % 10_000) / 100).toFixed(2),
    currency: 'EUR',
    rohs: i % 2 === 0,
    mpn: `MPN-${i}`,
  };
}

const csvField = (value) => (/[",\n|]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
const copyField = (value) =>
  value === null
    ? '\\N'
    : String(value).replace(
        /[\\\t\n\r]/g,
        (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c],
      );
const pgArray = (list) => `{${list.map((t) => `"${t.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;

function csvFile() {
  const lines = ['part_number,name,description,domain,uom,tags,attributes,unit_cost,currency,rohs,mpn'];
  for (let i = 1; i <= rows; i++) {
    const p = part(i);
    lines.push(
      [
        p.part_number,
        p.name,
        p.description,
        p.domain,
        p.uom,
        p.tags.join('|'),
        JSON.stringify(p.attributes),
        p.unit_cost,
        p.currency,
        String(p.rohs),
        p.mpn,
      ]
        .map(csvField)
        .join(','),
    );
  }
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}

/** The same rows as COPY text for the parts table, with the columns the import fills (its id and row). */
function copyText(workspaceId, userId) {
  const importId = newId();
  const lines = [];
  for (let i = 1; i <= rows; i++) {
    const p = part(i);
    const id = newId();
    lines.push(
      [
        id,
        workspaceId,
        p.part_number,
        p.name,
        p.description,
        p.domain,
        p.uom,
        'prototype',
        pgArray(p.tags),
        JSON.stringify(p.attributes),
        null,
        p.mpn,
        p.unit_cost,
        p.currency,
        p.rohs,
        null,
        null,
        userId,
        importId,
        i + 1,
      ]
        .map(copyField)
        .join('\t'),
    );
  }
  return lines;
}

async function importFile(base, authToken, workspace, file, dryRun) {
  const form = new FormData();
  form.set('workspace', workspace);
  form.set('dryRun', String(dryRun));
  form.set('file', new Blob([file], { type: 'text/csv' }), 'parts.csv');
  const started = performance.now();
  const res = await fetch(`${base}/v1/parts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${authToken}` },
    body: form,
  });
  const body = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 200)
    throw new Error(`import answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
  return { ms, body };
}

const setup = await benchSetup('parts-import');
const { env } = setup;
const started = [];
try {
  const owner = setup.user('owner');
  const authToken = owner.token;
  const file = csvFile();

  // Baseline: COPY of the same rows into another empty workspace of the same database.
  const client = new pg.Client({ connectionString: setup.db.url });
  await client.connect();
  const PARTS_COPY = `COPY parts (id, workspace_id, part_number, name, description, domain, uom, lifecycle, tags,
    attributes, manufacturer_name, manufacturer_part_number, unit_cost, currency, rohs_compliant,
    reach_compliant, conflict_minerals, created_by, import_id, import_row) FROM STDIN`;
  const newWorkspace = async () =>
    (
      await client.query(
        `INSERT INTO workspaces (id, name, created_by, created_at) VALUES ($1, $2, $3, now()) RETURNING id`,
        [newId(), `copy-${randomBytes(4).toString('hex')}`, owner.id],
      )
    ).rows[0].id;
  // Each timed step starts after a checkpoint: one that falls inside a step (100,000 indexed rows
  // are a lot of WAL) would otherwise decide the figure. Needs a superuser (the local test server).
  const checkpoint = () => client.query('CHECKPOINT').catch(() => {});
  const copyOnce = async () => {
    const text = Buffer.from(`${copyText(await newWorkspace(), owner.id).join('\n')}\n`, 'utf8');
    await checkpoint();
    const copyStarted = performance.now();
    await pipeline(
      async function* () {
        yield text;
      },
      client.query(copyFrom(PARTS_COPY)),
    );
    return performance.now() - copyStarted;
  };

  // Every import in a fresh process, so each peak RSS is that import's own: a dry run, then
  // BENCH_ROUNDS (3) rounds of a COPY and an applied import (each into an empty workspace).
  const importOnce = async (dryRun) => {
    const collab = await startCollab(env);
    started.push(collab);
    await call(collab.base, 'GET', '/api/session', authToken);
    const workspace = `bench-${randomBytes(4).toString('hex')}`;
    await call(collab.base, 'POST', '/v1/workspaces', authToken, { name: workspace });
    const idleRss = rssOf(collab.child.pid);
    await checkpoint();
    const { ms, body } = await importFile(collab.base, authToken, workspace, file, dryRun);
    const expected = dryRun ? body.created === rows : body.created === rows && body.errorCount === 0;
    if (!expected) throw new Error(`unexpected report: ${JSON.stringify(body).slice(0, 500)}`);
    const result = { ms, idleRss, peakRss: peakRssOf(collab.child.pid) };
    await collab.stop();
    return result;
  };
  const dryRun = await importOnce(true);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const copies = [];
  const applies = [];
  for (let round = 0; round < rounds; round++) {
    copies.push(await copyOnce());
    applies.push(await importOnce(false));
  }
  await client.end();
  const median = (values) => {
    const sorted = [...values].sort((x, y) => x - y);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  const copyMs = median(copies);
  const ratios = applies.map((apply, i) => apply.ms / copies[i]);
  const apply = {
    ms: median(applies.map((a) => a.ms)),
    idleRss: Math.max(...applies.map((a) => a.idleRss)),
    peakRss: Math.max(...applies.map((a) => a.peakRss)),
  };
  const measured = { dryRun, apply };

  const MB = 1024 * 1024;
  console.log(
    JSON.stringify({
      bench: 'parts-import',
      rows,
      fileMb: round2(file.length / MB),
      dryRunMs: Math.round(measured.dryRun.ms),
      applyMs: Math.round(measured.apply.ms),
      copyMs: Math.round(copyMs),
      dryRunRatio: round2(measured.dryRun.ms / copyMs),
      applyRatio: round2(median(ratios)),
      applyRatios: ratios.map(round2),
      applyMsEach: applies.map((a) => Math.round(a.ms)),
      copyMsEach: copies.map(Math.round),
      applyRatioTarget: 1.3,
      idleRssMb: Math.round(measured.apply.idleRss / MB),
      dryRunPeakRssMb: Math.round(measured.dryRun.peakRss / MB),
      applyPeakRssMb: Math.round(measured.apply.peakRss / MB),
      peakRssTargetMb: 250,
      baseline:
        'COPY parts FROM STDIN of the same rows (same table, same indexes, UUIDv7 ids as the service makes, the same import id and row columns), same database, same run',
    }),
  );
} finally {
  for (const collab of started) await collab.stop();
  await setup.close();
}
process.exit(0);
