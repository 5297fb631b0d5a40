// WebSocket subscription churn by clients that never read (issue 34, acceptance 4): a chat room
// with 50 stored 4,000-character messages; BENCH_WS_CLIENTS (1) socket(s) of one user stop reading
// and each sends BENCH_WS_PAIRS (6,000) subscribe/unsubscribe pairs to the room. Prints the API
// process's RSS before, at its peak and after, and how each socket ended. The API host runs from
// dist on Postgres and the in-process bus. To compare with another commit, copy bench/ws-churn and
// bench/lib into that checkout (after its build) and run it there.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { startApiProcess } from '../lib/api.mjs';
import { root, rssOf, sleep } from '../lib/collab.mjs';

const WebSocket = createRequire(join(root, 'package.json'))('ws');
const clients = Number(process.env.BENCH_WS_CLIENTS ?? 1);
const pairs = Number(process.env.BENCH_WS_PAIRS ?? 6_000);
const MB = 2 ** 20;

function open(url, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, ['bearer', token]);
    ws.once('message', () => resolve(ws));
    ws.once('error', reject);
  });
}

const api = await startApiProcess({ WS_PING_INTERVAL_MS: '600000' });
try {
  const token = await api.signUp();
  const writer = await open(api.url, token);
  const text = 'x'.repeat(4_000);
  for (let i = 0; i < 50; i++) writer.send(JSON.stringify({ type: 'chat.send', room: 'big', text }));
  await sleep(2_000);
  writer.close();
  const before = rssOf(api.pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(api.pid));
  }, 100);
  const sockets = await Promise.all(Array.from({ length: clients }, () => open(api.url, token)));
  const ends = sockets.map((ws) => new Promise((resolve) => ws.once('close', (code) => resolve(code))));
  const started = performance.now();
  for (const ws of sockets) ws.pause();
  for (let i = 0; i < pairs; i++) {
    for (const ws of sockets) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      ws.send('{"type":"subscribe","channel":"chat:big"}');
      ws.send('{"type":"unsubscribe","channel":"chat:big"}');
    }
    if (i % 200 === 0) await sleep(1);
  }
  // Give the server time to work through what it was sent, then let the clients read their end.
  await sleep(5_000);
  for (const ws of sockets) ws.resume();
  const codes = await Promise.race([Promise.all(ends), sleep(30_000).then(() => 'not closed within 30 s')]);
  clearInterval(sampler);
  await sleep(2_000);
  console.log(
    JSON.stringify({
      bench: 'ws-churn',
      clients,
      pairsPerClient: pairs,
      rssBeforeMB: Math.round(before / MB),
      rssPeakMB: Math.round(peak / MB),
      rssGrowthMB: Math.round((peak - before) / MB),
      rssAfterMB: Math.round(rssOf(api.pid) / MB),
      closeCodes: codes,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    }),
  );
  for (const ws of sockets) ws.terminate();
} finally {
  await api.stop();
}
