import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../../src/blob/blob-store';
import { FsBlobStore } from '../../src/blob/fs-blob-store';
import { createFsPresignedHandler, type FsPresignedHandler } from '../../src/blob/fs-presigned-handler';
import { S3BlobStore } from '../../src/blob/s3-blob-store';
import { startS3rver } from '../../src/test-kit/s3rver';

/** What the blob store tests share: the drivers the conformance cases run against, and their harness. */

export const MB = 1024 * 1024;
export const SIGNING_KEY = 'conformance-signing-key';

export interface Harness {
  store: BlobStore;
  /** Base URL of the fs driver's presigned handler; unset for S3. */
  publicBaseUrl?: string;
  teardown(): Promise<void>;
}

export interface Driver {
  name: 'fs' | 's3';
  start(): Promise<Harness>;
  /** s3rver 3.7.1 routes DELETE ?uploadId to MethodNotAllowed: it has no AbortMultipartUpload at all. */
  canAbortMultipart: boolean;
}

export async function startFsHarness(): Promise<Harness> {
  const root = await mkdtemp(path.join(tmpdir(), 'blob-fs-'));
  let handle: FsPresignedHandler | undefined;
  const server = createServer((req, res) => {
    if (!handle) {
      res.writeHead(503).end();
      return;
    }
    handle(req, res).then(
      (handled) => {
        if (!handled) res.writeHead(404).end();
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const publicBaseUrl = `http://127.0.0.1:${port}/blobs`;
  const store = new FsBlobStore({ root, publicBaseUrl, signingKey: SIGNING_KEY });
  handle = createFsPresignedHandler(store);
  return {
    store,
    publicBaseUrl,
    async teardown() {
      await store.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function startS3Harness(): Promise<Harness> {
  const s3 = await startS3rver();
  const store = new S3BlobStore({
    bucket: s3.bucket,
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  await store.ensureBucket();
  return {
    store,
    async teardown() {
      await store.close();
      await s3.stop();
    },
  };
}

export const drivers: Driver[] = [
  { name: 'fs', start: startFsHarness, canAbortMultipart: true },
  { name: 's3', start: startS3Harness, canAbortMultipart: false },
];

/**
 * Starts a harness before the enclosing block's tests (handing it to `started`) and tears it down
 * after them.
 */
export function useHarness(start: () => Promise<Harness>, started: (harness: Harness) => void): void {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await start();
    started(harness);
  });

  afterAll(async () => {
    await harness?.teardown();
  });
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
