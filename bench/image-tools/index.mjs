// Image tools of the API host on the local engine, from the built dist (`pnpm build` first), against
// real Postgres (BENCH_POSTGRES_URL) and the in-process bus. On a 1024 x 1024 product shot (a
// shaded part with text-like detail on a plain background): BENCH_IMAGE_CALLS (5) sequential calls of
// each of vectorize, remove-background (flood fill and GrabCut), upscale x2 and x4 (clarity), and
// BENCH_IMAGE_GENERATIVE_CALLS (1) of upscale x2 and x4 with the local ESRGAN model; each tool in a
// fresh process.
// Figures per tool: p50 time of a call, peak RSS of the process (VmHWM) against its idle RSS, and the
// event loop's lag p99 while the tool ran (the process's own monitor, read from /metrics, which
// resets it on every read; target < 50 ms: the pixel work runs in worker threads or libvips).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { startApiProcess } from '../lib/api.mjs';
import { percentile, root, round2, rssOf } from '../lib/collab.mjs';

const sharp = createRequire(join(root, 'services/api-service/package.json'))('sharp');
const calls = Number(process.env.BENCH_IMAGE_CALLS ?? 5);
const OPS_TOKEN = 'bench-ops-token-0123456789abcdef';

function peakRssOf(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match[1]) * 1024;
}

async function productShot() {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="1024">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#d04030"/><stop offset="1" stop-color="#601010"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="#f4f4f4"/>
    <rect x="212" y="262" width="600" height="500" rx="40" fill="url(#g)" stroke="#300000" stroke-width="8"/>
    <circle cx="512" cy="512" r="120" fill="#e0e0e0" stroke="#202020" stroke-width="6"/>
    ${Array.from({ length: 12 }, (_, i) => `<rect x="${260 + i * 42}" y="680" width="20" height="40" fill="#${(i * 20 + 40).toString(16)}2020"/>`).join('')}
    <text x="300" y="330" font-size="48" fill="#ffffff" font-family="sans-serif">HWP-BRACKET-7</text>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

async function lagP99Ms(url) {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } });
  const text = await res.text();
  const match = /^hwp_nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text);
  return match ? Number(match[1]) * 1000 : Number.NaN;
}

const TOOLS = {
  vectorize: (url) => ['/imgtool-vectorize', { reference_image: url, prompt: 'product illustration' }],
  'remove-background': (url) => ['/imgtool-remove-background', { reference_image: url }],
  'upscale x2': (url) => ['/imgtool-upscale', { image_path: url, scale_factor: 2 }],
  'upscale x4': (url) => ['/imgtool-upscale', { image_path: url, scale_factor: 4 }],
  'upscale x2 generative': (url) => [
    '/imgtool-upscale',
    { image_path: url, scale_factor: 2, mode: 'generative' },
  ],
  'upscale x4 generative': (url) => [
    '/imgtool-upscale',
    { image_path: url, scale_factor: 4, mode: 'generative' },
  ],
};
/** The local ESRGAN takes about a minute a call on two cores: BENCH_IMAGE_GENERATIVE_CALLS (1) of it. */
const generativeCalls = Number(process.env.BENCH_IMAGE_GENERATIVE_CALLS ?? 1);

const shot = await productShot();
for (const [tool, request] of Object.entries(TOOLS)) {
  const api = await startApiProcess({ OPS_TOKEN, RATE_LIMIT_AI_PER_WINDOW: '100000' });
  try {
    const token = await api.signUp();
    const headers = { authorization: `Bearer ${token}` };
    const form = new FormData();
    form.set('file', new Blob([shot], { type: 'image/png' }), 'shot.png');
    const uploaded = await (
      await fetch(`${api.url}/files/upload`, { method: 'POST', headers, body: form })
    ).json();
    const idleRss = rssOf(api.pid);
    await lagP99Ms(api.url); // resets the monitor
    const times = [];
    const count = tool.includes('generative') ? generativeCalls : calls;
    for (let i = 0; i < count; i++) {
      const [path, body] = request(uploaded.url);
      const started = performance.now();
      const res = await fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = await res.json();
      if (answer.status !== 'COMPLETED') throw new Error(`${tool}: ${res.status} ${JSON.stringify(answer)}`);
      times.push(performance.now() - started);
    }
    const lag = await lagP99Ms(api.url);
    times.sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        bench: 'image-tools',
        tool,
        image: '1024x1024 PNG',
        calls: count,
        p50Ms: round2(percentile(times, 50)),
        maxMs: round2(times[times.length - 1]),
        idleRssMb: Math.round(idleRss / 1e6),
        peakRssMb: Math.round(peakRssOf(api.pid) / 1e6),
        eventLoopLagP99Ms: round2(lag),
        eventLoopLagTargetMs: 50,
      }),
    );
  } finally {
    await api.stop();
  }
}
