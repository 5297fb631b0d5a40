// Small files that expand into huge work (issue 34, acceptance 3): while one user sends twelve
// 304-byte DXF files whose INSERT arrays a block thousands of times, a 4 KB DXF of 10 nested block
// levels (API host) and an 801 KB BOM import dry run of 20,000 rows each with a designator range of
// 10,000 (collaboration host), another user keeps reading (`GET /files`, `GET /v1/parts`). Prints the
// reader's p50/p99/max and 5xx for a quiet phase and for the abuse phase, in the same run, what the
// abusive requests got and how long they took, the files' final statuses, and peak RSS of both hosts.
// Both hosts run from dist on Postgres and RabbitMQ (production mode without S3). To compare with
// another commit, copy this folder into that checkout (after its build) and run it there.
// Settings: BENCH_QUIET_MS (default 10,000), BENCH_ABUSE_MAX_MS (default 120,000).
import { randomBytes } from 'node:crypto';
import { startApiProcess } from '../lib/api.mjs';
import { amqpUrl, benchSetup, call, sleep, startCollab } from '../lib/collab.mjs';
import { multipart, peakRss, reader } from '../lib/load.mjs';

const quietMs = Number(process.env.BENCH_QUIET_MS ?? 10_000);
const abuseMaxMs = Number(process.env.BENCH_ABUSE_MAX_MS ?? 120_000);

/** A 304-byte-class DXF: one block of one line, inserted as a `cols x rows` array. */
function dxfArray(cols, rows) {
  return [
    '0',
    'SECTION',
    '2',
    'BLOCKS',
    '0',
    'BLOCK',
    '2',
    'B',
    '10',
    '0',
    '20',
    '0',
    '0',
    'LINE',
    '8',
    '0',
    '10',
    '0',
    '20',
    '0',
    '11',
    '1',
    '21',
    '1',
    '0',
    'ENDBLK',
    '0',
    'ENDSEC',
    '0',
    'SECTION',
    '2',
    'ENTITIES',
    '0',
    'INSERT',
    '8',
    '0',
    '2',
    'B',
    '10',
    '0',
    '20',
    '0',
    '70',
    String(cols),
    '71',
    String(rows),
    '44',
    '2',
    '45',
    '2',
    '0',
    'ENDSEC',
    '0',
    'EOF',
    '',
  ].join('\n');
}

/** Ten block levels, each inserting the one below ten times in a row (10^10 lines once expanded). */
function dxfNested(levels = 10, fanOut = 10) {
  const lines = ['0', 'SECTION', '2', 'BLOCKS'];
  lines.push('0', 'BLOCK', '2', 'L0', '10', '0', '20', '0');
  lines.push('0', 'LINE', '8', '0', '10', '0', '20', '0', '11', '1', '21', '1', '0', 'ENDBLK');
  for (let level = 1; level <= levels; level++) {
    lines.push('0', 'BLOCK', '2', `L${level}`, '10', '0', '20', '0');
    for (let i = 0; i < fanOut; i++) {
      lines.push('0', 'INSERT', '8', '0', '2', `L${level - 1}`, '10', String(i * 2), '20', '0');
    }
    lines.push('0', 'ENDBLK');
  }
  lines.push('0', 'ENDSEC', '0', 'SECTION', '2', 'ENTITIES');
  lines.push('0', 'INSERT', '8', '0', '2', `L${levels}`, '10', '0', '20', '0', '0', 'ENDSEC', '0', 'EOF', '');
  return lines.join('\n');
}

/** 20,000 BOM rows, each with a designator range of 10,000 (about 800 KB). */
function designatorBom(partNumber) {
  const rows = ['part_number,qty,refdes'];
  for (let i = 0; i < 20_000; i++) rows.push(`${partNumber},10000,R1-R10000`);
  return `${rows.join('\n')}\n`;
}

const setup = await benchSetup('abuse');
const api = await startApiProcess({
  AMQP_URL: amqpUrl,
  AMQP_NAMESPACE: `bench-abuse-api-${randomBytes(3).toString('hex')}.`,
});
const collab = await startCollab(setup.env);
try {
  const [attacker, victim] = [await api.signUp(), await api.signUp()];
  const [owner, neighbour] = [setup.user('owner'), setup.user('neighbour')];
  const workspace = `abuse-${randomBytes(3).toString('hex')}`;
  await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });
  await call(collab.base, 'POST', '/v1/workspaces', neighbour.token, { name: `${workspace}-n` });
  const asm = await call(collab.base, 'POST', '/v1/parts', owner.token, {
    workspace,
    partNumber: 'ABUSE-ASM',
    name: 'assembly',
  });
  await call(collab.base, 'POST', '/v1/parts', owner.token, {
    workspace,
    partNumber: 'ABUSE-R',
    name: 'resistor',
  });
  const bom = await call(collab.base, 'POST', '/v1/boms', owner.token, {
    workspace,
    assemblyPartId: asm.id,
    type: 'engineering',
    revision: 'A',
  });
  for (let i = 0; i < 20; i++) {
    await multipart(
      `${api.url}/files/upload`,
      victim,
      {},
      { name: `note-${i}.txt`, content: 'x', type: 'text/plain' },
    );
    await call(collab.base, 'POST', '/v1/parts', neighbour.token, {
      workspace: `${workspace}-n`,
      partNumber: `N-${i}`,
      name: `part ${i}`,
    });
  }

  const phase = async (name, work) => {
    const readers = [
      reader(api.url, '/files?pageSize=20', victim),
      reader(collab.base, `/v1/parts?workspace=${workspace}-n&pageSize=20`, neighbour.token),
    ];
    const stopRss = peakRss([
      ['api', api.pid],
      ['collab', collab.child.pid],
    ]);
    const outcome = await work();
    const [apiReader, collabReader] = await Promise.all(readers.map((r) => r.stop()));
    console.log(
      JSON.stringify({
        bench: 'abuse-latency',
        phase: name,
        apiReader,
        collabReader,
        peakRss: stopRss(),
        ...outcome,
      }),
    );
  };

  await phase('quiet', async () => {
    await sleep(quietMs);
    return {};
  });

  await phase('abuse', async () => {
    const started = performance.now();
    const dxf = dxfArray(3000, 3000);
    const uploads = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) =>
        multipart(
          `${api.url}/files/upload`,
          attacker,
          {},
          { name: `array-${i}.dxf`, content: dxf, type: 'image/vnd.dxf' },
        ),
      ),
      multipart(
        `${api.url}/files/upload`,
        attacker,
        {},
        { name: 'nested.dxf', content: dxfNested(), type: 'image/vnd.dxf' },
      ),
    ]);
    const importDryRun = multipart(
      `${collab.base}/v1/boms/import?workspace=${workspace}`,
      owner.token,
      { bomId: bom.id, dryRun: 'true', workspace },
      { name: 'bom.csv', content: designatorBom('ABUSE-R'), type: 'text/csv' },
    );
    // Wait for every DXF to reach a final status (or the bound).
    const statuses = {};
    let finalAt = null;
    while (performance.now() - started < abuseMaxMs) {
      const res = await fetch(`${api.url}/files?pageSize=100`, {
        headers: { authorization: `Bearer ${attacker}` },
      });
      const items = res.ok ? (await res.json()).items : [];
      for (const k of Object.keys(statuses)) delete statuses[k];
      for (const f of items) statuses[f.processing_status] = (statuses[f.processing_status] ?? 0) + 1;
      if (
        items.length >= uploads.length &&
        items.every((f) => !['pending', 'processing'].includes(f.processing_status))
      ) {
        finalAt = Math.round(performance.now() - started);
        break;
      }
      await sleep(500);
    }
    const bomResult = await importDryRun;
    const collabAlive = collab.child.exitCode === null && collab.child.signalCode === null;
    return {
      dxfUploads: uploads.map((u) => u.status).join(','),
      uploadMaxMs: Math.max(...uploads.map((u) => u.ms)),
      dxfStatuses: statuses,
      dxfAllFinalAfterMs: finalAt,
      bomDryRun: { status: bomResult.status, ms: bomResult.ms, body: bomResult.body.slice(0, 160) },
      collabAlive,
    };
  });
} finally {
  await collab.stop();
  await api.stop();
  await setup.close();
}
