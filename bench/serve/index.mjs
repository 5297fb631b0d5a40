// Ranged reads through GET /v1/serve/:workspace/:username/:filename (auth, role check, metadata from
// Postgres, bytes from the local blob folder) against a bare node http server answering the same
// ranges of the same bytes with fs.createReadStream, in the same run. BENCH_SERVE_READS (2,000) reads of
// 64 KB at random offsets of a 16 MB file, BENCH_SERVE_CONCURRENCY (8) in flight, keep-alive.
// Figure: reads per second of each and their ratio, medians of BENCH_ROUNDS alternating rounds
// (target >= 0.7).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchSetup, call, cpuMicrosOf, freePort, round2, startCollab, stopChild } from '../lib/collab.mjs';

const reads = Number(process.env.BENCH_SERVE_READS ?? 2000);
const concurrency = Number(process.env.BENCH_SERVE_CONCURRENCY ?? 8);
const SIZE = 16 * 1024 * 1024;
const RANGE = 64 * 1024;
const content = randomBytes(SIZE);

const setup = await benchSetup('serve');
const collab = await startCollab({ ...setup.env, MAX_UPLOAD_MB: '64' });
const owner = setup.user('owner');
const { user } = await call(collab.base, 'POST', '/v1/users/init', owner.token, {});
const workspace = `bench-serve-${Date.now().toString(36)}`;
await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });
const form = new FormData();
form.set('file', new Blob([content]), 'model.bin');
const uploaded = await fetch(`${collab.base}/v1/upload?workspace=${workspace}&username=${user.username}`, {
  method: 'POST',
  headers: { authorization: `Bearer ${owner.token}` },
  body: form,
});
if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`);

const dir = mkdtempSync(join(tmpdir(), 'bench-serve-'));
const file = join(dir, 'model.bin');
writeFileSync(file, content);
const barePort = await freePort();
const bare = fork(new URL('./bare-server.mjs', import.meta.url).pathname, [file, String(barePort)]);
await new Promise((resolve) => bare.once('message', resolve));

/**
 * `reads` ranged GETs, `concurrency` at once; every answer checked against the bytes. Returns reads per
 * second, and into `cpu` the server's CPU microseconds per read (steadier than the rate on a busy machine).
 */
async function readAll(url, headers, server, cpu) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const one = (start) =>
    new Promise((resolve, reject) => {
      const req = request(
        url,
        { agent, headers: { ...headers, range: `bytes=${start}-${start + RANGE - 1}` } },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            if (res.statusCode !== 206 || !body.equals(content.subarray(start, start + RANGE)))
              reject(new Error(`${url}: ${res.statusCode}, ${body.length} bytes`));
            else resolve();
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  const worker = async () => {
    while (next < reads) {
      next++;
      await one(Math.floor(Math.random() * (SIZE - RANGE)));
    }
  };
  const started = process.hrtime.bigint();
  const cpuBefore = cpuMicrosOf(server.pid);
  await Promise.all(Array.from({ length: concurrency }, worker));
  cpu?.push((cpuMicrosOf(server.pid) - cpuBefore) / reads);
  agent.destroy();
  return reads / (Number(process.hrtime.bigint() - started) / 1e9);
}

try {
  const collabUrl = `${collab.base}/v1/serve/${workspace}/${user.username}/model.bin`;
  const auth = { authorization: `Bearer ${owner.token}` };
  await readAll(collabUrl, auth, collab.child); // warm-up
  const bareUrl = `http://127.0.0.1:${barePort}/`;
  await readAll(bareUrl, {}, bare);
  // BENCH_ROUNDS (3) alternating rounds of each; the figures are the medians.
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const bareRates = [];
  const servedRates = [];
  const ratios = [];
  const bareCpu = [];
  const servedCpu = [];
  for (let round = 0; round < rounds; round++) {
    bareRates.push(await readAll(bareUrl, {}, bare, bareCpu));
    servedRates.push(await readAll(collabUrl, auth, collab.child, servedCpu));
    ratios.push(servedRates[round] / bareRates[round]);
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(
    JSON.stringify({
      bench: 'serve',
      reads,
      rangeKb: RANGE / 1024,
      concurrency,
      rounds,
      readsPerSec: round2(median(servedRates)),
      baselineReadsPerSec: round2(median(bareRates)),
      ratio: round2(median(ratios)),
      ratios: ratios.map(round2),
      rates: servedRates.map(Math.round),
      baselineRates: bareRates.map(Math.round),
      cpuUsPerRead: Math.round(median(servedCpu)),
      baselineCpuUsPerRead: Math.round(median(bareCpu)),
      baseline: 'bare node http server, fs.createReadStream of the same ranges',
    }),
  );
} finally {
  bare.kill();
  await stopChild(collab.child);
  rmSync(dir, { recursive: true, force: true });
  await setup.close();
}
