// Requests per second of GET /healthz on the real API host app (all middleware: request id, pino-http,
// helmet, JSON parser, router, 404/error handlers) against a bare express app answering the same
// JSON, measured in the same run. Target ratio >= 0.8 (issue 19).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import express from 'express';

const require = createRequire(import.meta.url);
const root = new URL('../../', import.meta.url).pathname;
const { apiService, loadApiConfig } = require(join(root, 'services/api-service/dist/index.js'));
const { createAppServer, createServiceRuntime, createLogger } = require(
  join(root, 'packages/platform/dist/index.js'),
);

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

function listen(app) {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function load(port) {
  return new Promise((resolve, reject) => {
    autocannon({ url: `http://127.0.0.1:${port}/healthz`, connections, duration: seconds }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-http-'));
// Private by default; as root the embedded PostgreSQL server runs as `postgres`, which must enter it.
chmodSync(dataDir, 0o755);
const config = loadApiConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
const runtime = await createServiceRuntime(apiService, config, {
  logger: createLogger({ service: 'api-service', level: 'info' }),
});
// The service as it runs in production: its own app server (lifecycle.listen uses createAppServer).
const full = await new Promise((resolve) => {
  const server = createAppServer(runtime.app).listen(0, '127.0.0.1', () => resolve(server));
});

const bare = express();
bare.get('/healthz', (_req, res) => {
  res.json({ status: 'ok', service: 'api-service' });
});
const bareServer = await listen(bare);
// For the record: the same bare app on the platform's app server (no per-request prototype swap).
const bareOnAppServer = express();
bareOnAppServer.get('/healthz', (_req, res) => {
  res.json({ status: 'ok', service: 'api-service' });
});
const bareAppServer = await new Promise((resolve) => {
  const server = createAppServer(bareOnAppServer).listen(0, '127.0.0.1', () => resolve(server));
});

// Warm both up, then measure in alternating rounds so machine noise hits both; the figure is the
// median round's ratio (BENCH_ROUNDS, default 3).
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
await load(full.address().port);
await load(bareServer.address().port);
const results = [];
for (let i = 0; i < rounds; i++) {
  const baseline = await load(bareServer.address().port);
  const measured = await load(full.address().port);
  results.push({ baseline, measured, ratio: measured.requests.average / baseline.requests.average });
}
results.sort((a, b) => a.ratio - b.ratio);
const { baseline, measured, ratio } = results[Math.floor(results.length / 2)];
const bareOnApp = await load(bareAppServer.address().port);
console.log(
  JSON.stringify({
    bench: 'http-overhead',
    route: 'GET /healthz',
    connections,
    seconds,
    rounds,
    rps: Math.round(measured.requests.average),
    baselineRps: Math.round(baseline.requests.average),
    ratio: Number(ratio.toFixed(3)),
    ratios: results.map((r) => Number(r.ratio.toFixed(3))),
    p99Ms: measured.latency.p99,
    baselineP99Ms: baseline.latency.p99,
    target: '>= 0.8',
    bareOnAppServerRps: Math.round(bareOnApp.requests.average),
    ratioToBareOnAppServer: Number((measured.requests.average / bareOnApp.requests.average).toFixed(3)),
  }),
);
full.close();
bareServer.close();
bareAppServer.close();
await runtime.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
