// Seconds from `POST /api/viewer/translate-file` to a finished GLB (polled on `models/lookup`) and the
// collaboration process's peak RSS growth meanwhile, for a 50 MB binary STL and a 5 MB STEP, against
// the bare library call on the same file in the same run: translateModel of @hwp/geometry (the STL
// parser or OpenCascade's WASM build, then @gltf-transform writing the GLB) in a fresh node process,
// its seconds and its peak RSS growth. Target: both ratios <= 1.5. The service runs from dist on
// Postgres, RabbitMQ and the local blob folder. Sizes: BENCH_STL_MB (50), BENCH_STEP_MB (5);
// rounds: BENCH_TRANSLATE_RUNS (default 2, the median is reported).
// First, the library alone: GLB size, triangles at each simplify ratio and seconds, against the
// pipeline before issue 37 in the same run (./quality.mjs); `--quality` stops after those.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchSetup, call, root, round2, rssOf, sleep, startCollab } from '../lib/collab.mjs';
import { qualityFigures } from './quality.mjs';

const MB = 1024 * 1024;
const stlMb = Number(process.env.BENCH_STL_MB ?? 50);
const stepMb = Number(process.env.BENCH_STEP_MB ?? 5);
const runs = Math.max(1, Number(process.env.BENCH_TRANSLATE_RUNS ?? 2));
const geometryDist = join(root, 'packages/geometry/dist/index.js');
const { stepBoxes } = createRequire(join(root, 'packages/geometry/package.json'))(geometryDist);

/** A binary STL of about `mb` MB: a wavy height field, so no two facets share a normal. */
function heightFieldStl(mb, seed) {
  const triangles = Math.floor((mb * MB - 84) / 50);
  const out = Buffer.alloc(84 + triangles * 50);
  out.writeUInt32LE(triangles, 80);
  const side = Math.ceil(Math.sqrt(triangles / 2));
  const h = (x, y) => Math.sin(x * 0.05 + seed) * Math.cos(y * 0.05) * 10;
  let t = 0;
  for (let i = 0; t < triangles; i++) {
    for (let j = 0; j < side && t < triangles; j++) {
      const q = [
        [i, j, h(i, j)],
        [i + 1, j, h(i + 1, j)],
        [i + 1, j + 1, h(i + 1, j + 1)],
        [i, j + 1, h(i, j + 1)],
      ];
      for (const [a, b, c] of [
        [0, 1, 2],
        [0, 2, 3],
      ]) {
        if (t >= triangles) break;
        const at = 84 + t * 50 + 12;
        [...q[a], ...q[b], ...q[c]].forEach((v, k) => {
          out.writeFloatLE(v, at + k * 4);
        });
        t++;
      }
    }
  }
  return out;
}

/** A STEP part of about `mb` MB: a grid of box solids. */
function boxesStep(mb, seed) {
  const grid = (n) =>
    Array.from({ length: n }, (_, i) => ({
      at: [(i % 30) * 20, Math.floor(i / 30) * 20, seed],
      size: [10 + (i % 7), 10, 5 + (i % 5)],
    }));
  const perBox = Buffer.byteLength(stepBoxes(grid(100))) / 100;
  return Buffer.from(stepBoxes(grid(Math.round((mb * MB) / perBox)), `bench-${seed}`));
}

const BARE = `
const { readFileSync } = require('node:fs');
const { translateModel } = require(process.argv[1]);
const data = readFileSync(process.argv[2]);
const before = process.memoryUsage().rss;
const started = process.hrtime.bigint();
translateModel(data, process.argv[3]).then((model) => {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify({ seconds, rssGrowthMb: (peak - before) / 1048576, vertices: model.vertices }));
});
`;

/** The bare library call in a fresh node process (its own peak RSS), on the file at `path`. */
function bare(path, format) {
  const run = spawnSync(process.execPath, ['-e', BARE, geometryDist, path, format], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`bare translation failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** Seconds and peak RSS growth of a translation through the service, against the bare library call. */
async function serviceFigures() {
  const setup = await benchSetup('translate');
  const collab = await startCollab({ ...setup.env, MAX_UPLOAD_MB: '200', UPLOADS_PER_MINUTE: '1000' });
  const files = mkdtempSync(join(tmpdir(), 'bench-translate-'));
  try {
    const owner = setup.user('owner');
    const { user } = await call(collab.base, 'POST', '/v1/users/init', owner.token, {});
    const workspace = `bench-tr-${Date.now().toString(36)}`;
    await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });
    const headers = { authorization: `Bearer ${owner.token}` };

    /** Upload, queue, and poll until done: seconds from the POST and the process's peak RSS growth. */
    async function throughService(filename, data) {
      const form = new FormData();
      form.set('file', new Blob([data]), filename);
      const up = await fetch(`${collab.base}/v1/upload?workspace=${workspace}&username=${user.username}`, {
        method: 'POST',
        headers,
        body: form,
      });
      if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${await up.text()}`);
      await sleep(500);
      const before = rssOf(collab.child.pid);
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssOf(collab.child.pid));
      }, 20);
      const started = process.hrtime.bigint();
      try {
        const name = `${user.username}/${filename}`;
        await call(collab.base, 'POST', '/api/viewer/translate-file', owner.token, {
          workspace,
          filename: name,
        });
        for (;;) {
          const res = await fetch(
            `${collab.base}/api/viewer/models/lookup?workspace=${workspace}&filename=${encodeURIComponent(name)}`,
            { headers },
          );
          const body = await res.json();
          if (body.status === 'success') {
            const seconds = Number(process.hrtime.bigint() - started) / 1e9;
            return { seconds, rssGrowthMb: (peak - before) / MB, vertices: body.vertices };
          }
          if (body.status === 'failed') throw new Error(`translation failed: ${body.reason}`);
          await sleep(25);
        }
      } finally {
        clearInterval(sampler);
      }
    }

    for (const [kind, make, format, ext, mb] of [
      ['stl', heightFieldStl, 'stl', 'stl', stlMb],
      ['step', boxesStep, 'step', 'step', stepMb],
    ]) {
      const service = [];
      const baseline = [];
      for (let round = 0; round < runs; round++) {
        const data = make(mb, round + 1);
        const path = join(files, `model-${round}.${ext}`);
        writeFileSync(path, data);
        baseline.push(bare(path, format));
        service.push(await throughService(`model-${round}.${ext}`, data));
      }
      const seconds = median(service.map((m) => m.seconds));
      const bareSeconds = median(baseline.map((m) => m.seconds));
      const rss = median(service.map((m) => m.rssGrowthMb));
      const bareRss = median(baseline.map((m) => m.rssGrowthMb));
      console.log(
        JSON.stringify({
          bench: 'translate',
          file: kind,
          sizeMb: round2(make === heightFieldStl ? mb : Buffer.byteLength(boxesStep(mb, 1)) / MB),
          vertices: service[0].vertices,
          seconds: round2(seconds),
          bareSeconds: round2(bareSeconds),
          secondsRatio: round2(seconds / bareSeconds),
          peakRssGrowthMb: round2(rss),
          barePeakRssGrowthMb: round2(bareRss),
          rssRatio: round2(rss / bareRss),
          runs,
          baseline: 'translateModel (@hwp/geometry) on the same file in a fresh node process',
        }),
      );
    }
  } finally {
    await collab.stop();
    rmSync(files, { recursive: true, force: true });
    await setup.close();
  }
}

await qualityFigures();
if (!process.argv.includes('--quality')) await serviceFigures();
