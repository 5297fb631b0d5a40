// Remove-background on a 6000 x 6000 PNG (a 217 KB file: a disc on white), from the built dist
// (`pnpm build` first): the service's removeBackground (the mask computed at most 2048 px a side,
// scaled to the source, joined by libvips) against the baseline of the same segmentation run at full
// size with the pixels joined in JavaScript (the code before). Each run in a fresh process,
// alternating, BENCH_ROUNDS (2) of each; figures: time of the call and the process's peak RSS.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from '../lib/collab.mjs';

const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const api = join(root, 'services/api-service');

const child = (mode) => `
const sharp = require(${JSON.stringify(join(api, 'node_modules/sharp'))});
(async () => {
  const png = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#ffffff' } })
    .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="2000"><circle cx="1000" cy="1000" r="800" fill="#1840a0"/></svg>'), top: 2000, left: 2000 }])
    .png().toBuffer();
  const started = performance.now();
  if (${JSON.stringify(mode)} === 'service') {
    const { removeBackground } = require(${JSON.stringify(join(api, 'dist/modules/images/local-engine.js'))});
    await removeBackground(png);
  } else {
    const { inWorker } = require(${JSON.stringify(join(api, 'dist/modules/images/engine/launch.js'))});
    const { data, info } = await sharp(png).rotate().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const image = { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
    const rgb = Buffer.from(image.data);
    const { alpha } = await inWorker({ kind: 'mask', image });
    for (let i = 0; i < info.width * info.height; i++) rgb[i * 4 + 3] = alpha[i];
    await sharp(rgb, { raw: { width: info.width, height: info.height, channels: 4 } }).png().toBuffer();
  }
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
  process.exit(0);
})();`;

const results = { service: [], baseline: [] };
for (let i = 0; i < rounds; i++) {
  for (const mode of ['baseline', 'service']) {
    const run = spawnSync(process.execPath, ['-e', child(mode)], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${mode} run failed: ${run.stderr}`);
    results[mode].push(JSON.parse(run.stdout));
  }
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figure = (mode) => ({
  ms: Math.round(median(results[mode].map((r) => r.ms))),
  peakRssMb: Math.round(median(results[mode].map((r) => r.peakRssMb))),
});
const service = figure('service');
const baseline = figure('baseline');
console.log(
  JSON.stringify({
    bench: 'remove-background-large',
    source: '6000x6000 PNG',
    service,
    baseline,
    rssRatio: Math.round((service.peakRssMb / baseline.peakRssMb) * 100) / 100,
    timeRatio: Math.round((service.ms / baseline.ms) * 100) / 100,
  }),
);
