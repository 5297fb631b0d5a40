// Parts import of the collaboration host, from the built dist (`pnpm build` first), against real
// Postgres and RabbitMQ (BENCH_POSTGRES_URL, BENCH_AMQP_URL; defaults: the local test servers).
//
// A BENCH_ROWS (100,000) row CSV of varied parts (every domain, tags, JSON attributes, costs) is
// sent to POST /v1/parts/import twice: as a dry run, then applied into an empty workspace. Baseline,
// in the same run and database: a raw `COPY parts FROM STDIN` of the same rows (already converted
// to table columns) into another empty workspace, with the same indexes. Figures: wall-clock of
// each import request, their ratio to the COPY, and the peak RSS of the collaboration process
// (VmHWM, worker thread included) measured in a fresh process per import. JSON lines.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { benchSetup, call, pg, root, round2, rssOf, startCollab } from '../lib/collab.mjs';

const { from: copyFrom } = createRequire(join(root, 'packages/platform/package.json'))('pg-copy-streams');
// Ids as the service makes them (UUIDv7: time-ordered, so index inserts land near each other).
const { v7 } = createRequire(join(root, 'packages/platform/package.json'))('uuid');
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

/** The same rows as COPY text for the parts table (and, with `history`, their history rows). */
function copyText(workspaceId, userId, history) {
  const lines = [];
  for (let i = 1; i <= rows; i++) {
    const p = part(i);
    const id = v7();
    history?.push(
      [
        v7(),
        id,
        userId,
        'import.created',
        JSON.stringify({
          partNumber: p.part_number,
          name: p.name,
          domain: p.domain,
          lifecycle: 'prototype',
          import: { id: 'baseline', row: i + 1 },
        }),
      ]
        .map(copyField)
        .join('\t'),
    );
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

  // Dry run and apply each in a fresh process, so each peak RSS is that import's own.
  const measured = {};
  for (const dryRun of [true, false]) {
    const collab = await startCollab(env);
    started.push(collab);
    await call(collab.base, 'GET', '/api/session', authToken);
    const workspace = `bench-${randomBytes(4).toString('hex')}`;
    await call(collab.base, 'POST', '/v1/workspaces', authToken, { name: workspace });
    const idleRss = rssOf(collab.child.pid);
    const { ms, body } = await importFile(collab.base, authToken, workspace, file, dryRun);
    const expected = dryRun ? body.created === rows : body.created === rows && body.errorCount === 0;
    if (!expected) throw new Error(`unexpected report: ${JSON.stringify(body).slice(0, 500)}`);
    measured[dryRun ? 'dryRun' : 'apply'] = { ms, idleRss, peakRss: peakRssOf(collab.child.pid) };
    await collab.stop();
  }

  // Baselines: COPY of the same rows into another empty workspace of the same database; and COPY of
  // everything the import writes (the parts and their history rows, in one transaction).
  const client = new pg.Client({ connectionString: setup.db.url });
  await client.connect();
  const copyInto = async (statement, lines) => {
    const text = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
    await pipeline(
      async function* () {
        yield text;
      },
      client.query(copyFrom(statement)),
    );
  };
  const PARTS_COPY = `COPY parts (id, workspace_id, part_number, name, description, domain, uom, lifecycle, tags,
    attributes, manufacturer_name, manufacturer_part_number, unit_cost, currency, rohs_compliant,
    reach_compliant, conflict_minerals, created_by) FROM STDIN`;
  const newWorkspace = async () =>
    (
      await client.query(
        `INSERT INTO workspaces (id, name, created_by, created_at) VALUES ($1, $2, $3, now()) RETURNING id`,
        [v7(), `copy-${randomBytes(4).toString('hex')}`, owner.id],
      )
    ).rows[0].id;
  const partsOnly = copyText(await newWorkspace(), owner.id);
  const copyStarted = performance.now();
  await copyInto(PARTS_COPY, partsOnly);
  const copyMs = performance.now() - copyStarted;
  const historyLines = [];
  const withHistory = copyText(await newWorkspace(), owner.id, historyLines);
  const bothStarted = performance.now();
  await client.query('BEGIN');
  await copyInto(PARTS_COPY, withHistory);
  await copyInto('COPY part_history (id, part_id, actor, action, changes) FROM STDIN', historyLines);
  await client.query('COMMIT');
  const copyBothMs = performance.now() - bothStarted;
  await client.end();

  const MB = 1024 * 1024;
  console.log(
    JSON.stringify({
      bench: 'parts-import',
      rows,
      fileMb: round2(file.length / MB),
      dryRunMs: Math.round(measured.dryRun.ms),
      applyMs: Math.round(measured.apply.ms),
      copyMs: Math.round(copyMs),
      copyWithHistoryMs: Math.round(copyBothMs),
      dryRunRatio: round2(measured.dryRun.ms / copyMs),
      applyRatio: round2(measured.apply.ms / copyMs),
      applyRatioTarget: 1.3,
      applyRatioToCopyWithHistory: round2(measured.apply.ms / copyBothMs),
      idleRssMb: Math.round(measured.apply.idleRss / MB),
      dryRunPeakRssMb: Math.round(measured.dryRun.peakRss / MB),
      applyPeakRssMb: Math.round(measured.apply.peakRss / MB),
      peakRssTargetMb: 250,
      baseline:
        'COPY parts FROM STDIN of the same rows (same table, same indexes, UUIDv7 ids as the service makes), same database, same run; copyWithHistory: COPY of those parts and their history rows in one transaction',
    }),
  );
} finally {
  for (const collab of started) await collab.stop();
  await setup.close();
}
process.exit(0);
