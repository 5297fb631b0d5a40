// The 801 KB designator file (issue 34, finding 2) against a production-mode collaboration host from
// dist: 20,000 rows, each `R1-R10000`. While one member sends BENCH_BOM_RUNS (5) dry runs of it one
// after another, and one apply, a member of another workspace keeps reading `GET /v1/parts`. Prints
// the reader's p50/p99/max and 5xx for a quiet phase and for the abuse phase, each import's status and
// time, and the host's peak RSS. BENCH_COLLAB_MAIN runs another build (a copy of dist) for a comparison.
// Settings: BENCH_QUIET_MS (default 10,000), BENCH_BOM_RUNS (default 5).
import { randomBytes } from 'node:crypto';
import { benchSetup, call, sleep, startCollab } from '../lib/collab.mjs';
import { multipart, peakRss, reader } from '../lib/load.mjs';

const quietMs = Number(process.env.BENCH_QUIET_MS ?? 10_000);
const runs = Number(process.env.BENCH_BOM_RUNS ?? 5);

const rows = ['part_number,qty,refdes,notes'];
for (let i = 0; i < 20_000; i++) rows.push('BOMD-R,10000,R1-R10000,ten thousand Rs.');
const file = `${rows.join('\n')}\n`;

const setup = await benchSetup('bom-designators');
const collab = await startCollab({
  ...setup.env,
  NODE_ENV: 'production',
  SESSION_SECRET: randomBytes(32).toString('hex'),
});
try {
  const [owner, neighbour] = [setup.user('owner'), setup.user('neighbour')];
  const workspace = `bomd-${randomBytes(3).toString('hex')}`;
  await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });
  await call(collab.base, 'POST', '/v1/workspaces', neighbour.token, { name: `${workspace}-n` });
  const asm = await call(collab.base, 'POST', '/v1/parts', owner.token, {
    workspace,
    partNumber: 'BOMD-ASM',
    name: 'assembly',
  });
  await call(collab.base, 'POST', '/v1/parts', owner.token, { workspace, partNumber: 'BOMD-R', name: 'r' });
  const bom = await call(collab.base, 'POST', '/v1/boms', owner.token, {
    workspace,
    assemblyPartId: asm.id,
    type: 'engineering',
    revision: 'A',
  });
  for (let i = 0; i < 20; i++) {
    await call(collab.base, 'POST', '/v1/parts', neighbour.token, {
      workspace: `${workspace}-n`,
      partNumber: `N-${i}`,
      name: `part ${i}`,
    });
  }
  const upload = (fields) =>
    multipart(
      `${collab.base}/v1/boms/import?workspace=${workspace}`,
      owner.token,
      { bomId: bom.id, workspace, ...fields },
      { name: 'bom.csv', content: file, type: 'text/csv' },
    );

  const phase = async (name, work) => {
    const read = reader(collab.base, `/v1/parts?workspace=${workspace}-n&pageSize=20`, neighbour.token);
    const stopRss = peakRss([['collab', collab.child.pid]]);
    const outcome = await work();
    console.log(
      JSON.stringify({
        bench: 'bom-designators',
        phase: name,
        reader: await read.stop(),
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
    const imports = [];
    for (let i = 0; i < runs; i++) imports.push(await upload({ dryRun: 'true' }));
    imports.push(await upload({}));
    return {
      bytes: file.length,
      imports: imports.map((r) => `${r.status} ${r.ms} ms`),
      body: imports[0].body.slice(0, 200),
      collabAlive: collab.child.exitCode === null && collab.child.signalCode === null,
    };
  });
} finally {
  await collab.stop();
  await setup.close();
}
