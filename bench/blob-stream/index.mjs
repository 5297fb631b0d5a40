// Streaming put throughput and memory of both blob drivers against the plainest way to move the same
// bytes: a bare fs pipeline for the fs driver, a bare lib-storage Upload (same part size and queue) for
// the S3 driver, which talks to s3rver in a child process. The body is generated chunk by chunk and never held
// whole, so peak RSS growth shows whether a driver buffers. Size: BENCH_BLOB_MB (default 200); rounds:
// BENCH_BLOB_RUNS (default 3), alternating which side goes first, reporting median throughput and the
// worst RSS growth (disk writeback from one run slows the next, so a single ordered pair is noisy).
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generatedBody, startS3rverProcess } from '../lib/blobs.mjs';

const require = createRequire(import.meta.url);
const root = new URL('../../', import.meta.url).pathname;
const { FsBlobStore } = require(join(root, 'packages/platform/dist/blob/index.js'));
// Its own module: the blob index loads the AWS SDK only when a store on S3 is created.
const { S3BlobStore } = require(join(root, 'packages/platform/dist/blob/s3-blob-store.js'));
// The SDK is a dependency of the platform package only, so resolve it from there.
const platformRequire = createRequire(join(root, 'packages/platform/package.json'));
const { S3Client, DeleteObjectCommand } = platformRequire('@aws-sdk/client-s3');
const { Upload } = platformRequire('@aws-sdk/lib-storage');

const MB = 1024 * 1024;
const sizeMb = Number(process.env.BENCH_BLOB_MB ?? 200);
const totalBytes = Math.round(sizeMb * MB);
const runs = Math.max(1, Number(process.env.BENCH_BLOB_RUNS ?? 3));

// Collect between runs so one run's garbage does not count as the next one's growth.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

/** Times `run` while sampling RSS every 50 ms; growth is measured from the RSS right before it started. */
async function measure(run) {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const baseRss = process.memoryUsage.rss();
  let peakRss = baseRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 50);
  const started = process.hrtime.bigint();
  try {
    await run();
  } finally {
    clearInterval(sampler);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  return { mbPerSec: sizeMb / seconds, peakRssGrowthMb: (peakRss - baseRss) / MB };
}

/** Runs both sides `runs` times, alternating the order, and summarises each side. */
async function compare(baselineRun, driverRun) {
  const baselines = [];
  const drivers = [];
  for (let round = 0; round < runs; round++) {
    if (round % 2 === 0) {
      baselines.push(await measure(baselineRun));
      drivers.push(await measure(driverRun));
    } else {
      drivers.push(await measure(driverRun));
      baselines.push(await measure(baselineRun));
    }
  }
  return { measured: summarise(drivers), baseline: summarise(baselines) };
}

function summarise(results) {
  const speeds = results.map((r) => r.mbPerSec).sort((a, b) => a - b);
  return {
    mbPerSec: speeds[Math.floor(speeds.length / 2)],
    peakRssGrowthMb: Math.max(...results.map((r) => r.peakRssGrowthMb)),
  };
}

function report(driver, { measured, baseline }, extra) {
  console.log(
    JSON.stringify({
      bench: 'blob-stream',
      driver,
      sizeMb,
      mbPerSec: round(measured.mbPerSec),
      baselineMbPerSec: round(baseline.mbPerSec),
      ratio: round(measured.mbPerSec / baseline.mbPerSec, 3),
      peakRssGrowthMb: round(measured.peakRssGrowthMb),
      baselinePeakRssGrowthMb: round(baseline.peakRssGrowthMb),
      runs,
      ...extra,
    }),
  );
}

function round(value, digits = 1) {
  return Number(value.toFixed(digits));
}

async function benchFs(dir) {
  const store = new FsBlobStore({ root: join(dir, 'store'), signingKey: 'bench' });
  const plainFile = join(dir, 'plain.bin');
  const plain = () => pipeline(generatedBody(totalBytes), createWriteStream(plainFile));
  const driver = () => store.put('bench/blob.bin', generatedBody(totalBytes));
  // Warm up code paths and the page cache on a small body first.
  await pipeline(generatedBody(8 * MB), createWriteStream(plainFile));
  await store.put('bench/warmup.bin', generatedBody(8 * MB));
  const results = await compare(plain, driver);
  await store.close();
  report('fs', results, { baseline: 'fs pipeline to a file' });
}

async function benchS3(dir) {
  const bucket = 'bench';
  const server = await startS3rverProcess(join(dir, 's3rver'), bucket);
  const { port } = server;
  const connection = {
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  };
  const store = new S3BlobStore({ bucket, ...connection });
  const client = new S3Client({
    ...connection,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const plain = (body) =>
    new Upload({
      client,
      params: { Bucket: bucket, Key: 'plain.bin', Body: body },
      partSize: 8 * MB,
      queueSize: 4,
    })
      .done()
      .then(() => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'plain.bin' })));
  const driver = (body) => store.put('bench/blob.bin', body).then(() => store.delete('bench/blob.bin'));
  await plain(generatedBody(20 * MB));
  await driver(generatedBody(20 * MB));
  const results = await compare(
    () => plain(generatedBody(totalBytes)),
    () => driver(generatedBody(totalBytes)),
  );
  await store.close();
  client.destroy();
  server.close();
  report('s3', results, {
    baseline: 'lib-storage Upload, 8 MB parts, 4 in flight (SDK default style)',
    server: 's3rver in a child process',
  });
}

const dir = mkdtempSync(join(tmpdir(), 'bench-blob-'));
try {
  await benchFs(dir);
  await benchS3(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
