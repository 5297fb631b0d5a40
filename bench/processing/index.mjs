// Files processed per minute for a mix of 1 MB STL, STEP and PNG files (target >= 60 on 2 cores), and
// the API's p99 on `GET /files` while processing runs (target < 100 ms) against its p99 with nothing
// to process, in the same run. The API host runs from dist on Postgres, the in-process bus and the
// local blob folder. Files: BENCH_PROCESSING_FILES (default 60, a third of each kind).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { startApiProcess } from '../lib/api.mjs';
import { percentile, root, round2, sleep } from '../lib/collab.mjs';

const MB = 1024 * 1024;
const count = Number(process.env.BENCH_PROCESSING_FILES ?? 60);
const sharp = createRequire(join(root, 'services/api-service/package.json'))('sharp');

/** A binary STL of about 1 MB: a grid of boxes. */
function stl(seed) {
  const boxes = Math.floor((MB - 84) / 600);
  const out = Buffer.alloc(84 + boxes * 600);
  out.writeUInt32LE(boxes * 12, 80);
  const quads = [
    [0, 2, 3, 1],
    [4, 5, 7, 6],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 4, 6, 2],
    [1, 3, 7, 5],
  ];
  let at = 84;
  for (let b = 0; b < boxes; b++) {
    const [ox, oy, h] = [(b % 40) * 2, Math.floor(b / 40) * 2, 1 + ((b + seed) % 9)];
    const v = (i) => [ox + (i & 1), oy + ((i >> 1) & 1), i & 4 ? h : 0];
    for (const [a, c, d, e] of quads) {
      for (const tri of [
        [a, c, d],
        [a, d, e],
      ]) {
        at += 12;
        for (const i of tri) for (const x of v(i)) at = out.writeFloatLE(x, at);
        at += 2;
      }
    }
  }
  return out;
}

/** A STEP text of about 1 MB: a header and points, polylines and products. */
function step(seed) {
  const lines = [
    'ISO-10303-21;',
    'HEADER;',
    "FILE_DESCRIPTION(('bench'),'2;1');",
    `FILE_NAME('part-${seed}.stp','2026-11-24T00:00:00',(''),(''),'bench','CAD bench ${seed}','');`,
    "FILE_SCHEMA(('AUTOMOTIVE_DESIGN'));",
    'ENDSEC;',
    'DATA;',
    '#1=( LENGTH_UNIT() NAMED_UNIT(*) SI_UNIT(.MILLI.,.METRE.) );',
  ];
  let size = lines.join('\n').length;
  for (let i = 2; size < MB; i++) {
    const line =
      i % 500 === 0
        ? `#${i}=PRODUCT('P${i}','part ${i}','',(#1));`
        : `#${i}=CARTESIAN_POINT('',(${i % 97}.5,${(i * 7) % 89}.25,${seed}.0));`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push('ENDSEC;', 'END-ISO-10303-21;', '');
  return Buffer.from(lines.join('\n'));
}

const png = (seed) =>
  sharp({
    create: {
      width: 560,
      height: 560,
      channels: 3,
      noise: { type: 'gaussian', mean: 120 + seed, sigma: 40 },
    },
  })
    .png({ compressionLevel: 1 })
    .toBuffer();

const api = await startApiProcess();
const token = await api.signUp();
const auth = { authorization: `Bearer ${token}` };

async function upload(name, content) {
  const body = new FormData();
  body.set('file', new Blob([content]), name);
  const res = await fetch(`${api.url}/files/upload`, { method: 'POST', headers: auth, body });
  if (res.status !== 201) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

/** Latencies of `GET /files` one after another while `running()` says so (at least `minimum` requests). */
async function listLatencies(running, minimum = 200) {
  const times = [];
  while (running() || times.length < minimum) {
    const started = performance.now();
    const res = await fetch(`${api.url}/files?pageSize=20`, { headers: auth });
    await res.arrayBuffer();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

try {
  const files = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 3;
    files.push(
      kind === 0
        ? [`bench-${i}.stl`, stl(i)]
        : kind === 1
          ? [`bench-${i}.step`, step(i)]
          : [`bench-${i}.png`, await png(i % 30)],
    );
  }
  // Warm up: one of each kind, then the idle baseline of the list route.
  const warm = await Promise.all(files.slice(0, 3).map(([name, content]) => upload(`warm-${name}`, content)));
  const settled = async (ids) => {
    for (;;) {
      const res = await fetch(`${api.url}/files?pageSize=500`, { headers: auth });
      const { items } = await res.json();
      const open = items.filter(
        (f) => ids.includes(f.id) && !['ready', 'quarantined', 'failed'].includes(f.processing_status),
      );
      if (open.length === 0) return items;
      await sleep(100);
    }
  };
  await settled(warm);
  const idle = await listLatencies(() => false, 300);

  const started = performance.now();
  const ids = [];
  for (const [name, content] of files) ids.push(await upload(name, content));
  let processing = true;
  const busy = listLatencies(() => processing, 50);
  const items = await settled(ids);
  const minutes = (performance.now() - started) / 60_000;
  processing = false;
  const busyTimes = await busy;
  const statuses = {};
  for (const f of items.filter((f) => ids.includes(f.id)))
    statuses[f.processing_status] = (statuses[f.processing_status] ?? 0) + 1;
  console.log(
    JSON.stringify({
      bench: 'processing',
      files: count,
      mix: '1 MB STL, STEP and PNG, a third each',
      filesPerMinute: round2(count / minutes),
      statuses,
      listP50Ms: round2(percentile(busyTimes, 50)),
      listP99Ms: round2(percentile(busyTimes, 99)),
      idleListP99Ms: round2(percentile(idle, 99)),
      p99Ratio: round2(percentile(busyTimes, 99) / percentile(idle, 99)),
      listRequests: busyTimes.length,
    }),
  );
} finally {
  await api.stop();
}
