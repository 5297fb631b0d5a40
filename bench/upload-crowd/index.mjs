// Thirty uploads at once, and a broker outage, while another user reads (issue 34, acceptance 2).
// The API host runs from dist on Postgres, s3rver and RabbitMQ reached through a TCP proxy the bench
// can cut. Phases, each printing the reader's p50/p99/max and 5xx (GET /files), the uploads' answers
// and how long until every file reached a final status:
//   quiet     nothing but the reader (the baseline of the same run);
//   crowd     30 concurrent uploads of small text files;
//   outage    30 more uploads, then the broker is unreachable for BENCH_OUTAGE_MS (30 s).
// To compare with another commit, copy bench/upload-crowd and bench/lib into that checkout (after its
// build) and run it there.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { startApiProcess } from '../lib/api.mjs';
import { root, sleep } from '../lib/collab.mjs';
import { multipart, peakRss, reader } from '../lib/load.mjs';

const kit = createRequire(join(root, 'packages/platform/package.json'))('./dist/test-kit');
const quietMs = Number(process.env.BENCH_QUIET_MS ?? 10_000);
const outageMs = Number(process.env.BENCH_OUTAGE_MS ?? 30_000);
const files = Number(process.env.BENCH_UPLOADS ?? 30);

const s3 = await kit.startS3rver();
const broker = await kit.TcpProxy.create({ host: '127.0.0.1', port: 5672 });
const api = await startApiProcess({
  ...kit.s3Env(s3),
  AMQP_URL: `amqp://guest:guest@127.0.0.1:${broker.port}`,
  AMQP_NAMESPACE: `bench-crowd-${randomBytes(3).toString('hex')}.`,
});

async function allFinal(token, expected, maxMs) {
  const started = performance.now();
  let states = {};
  while (performance.now() - started < maxMs) {
    const res = await fetch(`${api.url}/files?pageSize=200`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const items = res.ok ? (await res.json()).items : [];
    states = {};
    for (const f of items) states[f.processing_status] = (states[f.processing_status] ?? 0) + 1;
    const final = items.filter((f) => ['ready', 'failed', 'quarantined'].includes(f.processing_status));
    if (final.length >= expected) return { finalAfterMs: Math.round(performance.now() - started), states };
    await sleep(250);
  }
  return { finalAfterMs: null, states };
}

try {
  const [uploader, victim] = [await api.signUp(), await api.signUp()];
  for (let i = 0; i < 20; i++) {
    await multipart(
      `${api.url}/files/upload`,
      victim,
      {},
      { name: `own-${i}.txt`, content: 'x', type: 'text/plain' },
    );
  }
  let uploaded = 0;
  const crowd = async () => {
    const answers = await Promise.all(
      Array.from({ length: files }, (_, i) =>
        multipart(
          `${api.url}/files/upload`,
          uploader,
          {},
          {
            name: `crowd-${uploaded + i}.txt`,
            content: `file ${uploaded + i} ${'text '.repeat(200)}`,
            type: 'text/plain',
          },
        ),
      ),
    );
    uploaded += files;
    const statuses = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    return { uploads: statuses, uploadMaxMs: Math.max(...answers.map((a) => a.ms)) };
  };
  const phase = async (name, work) => {
    const read = reader(api.url, '/files?pageSize=20', victim);
    const stopRss = peakRss([['api', api.pid]]);
    const outcome = await work();
    const victimReader = await read.stop();
    console.log(
      JSON.stringify({ bench: 'upload-crowd', phase: name, victimReader, peakRss: stopRss(), ...outcome }),
    );
  };

  await phase('quiet', async () => {
    await sleep(quietMs);
    return {};
  });
  await phase('crowd', async () => {
    const sent = await crowd();
    return { ...sent, ...(await allFinal(uploader, uploaded, 120_000)) };
  });
  await phase('outage', async () => {
    const sent = await crowd();
    await broker.stop();
    await sleep(outageMs);
    await broker.start();
    return { ...sent, outageMs, ...(await allFinal(uploader, uploaded, 300_000)) };
  });
} finally {
  await api.stop();
  await broker.close();
  await s3.stop();
}
