import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startS3rver } from '../test-kit/s3rver';
import {
  BlobNotFoundError,
  type BlobStore,
  InvalidBlobKeyError,
  MultipartUploadNotFoundError,
  RangeNotSatisfiableError,
} from './blob-store';
import {
  createFsPresignedHandler,
  FsBlobStore,
  type FsPresignedHandler,
  verifyFsPresignedUrl,
} from './fs-blob-store';
import { S3BlobStore } from './s3-blob-store';

const MB = 1024 * 1024;
const SIGNING_KEY = 'conformance-signing-key';

interface Harness {
  store: BlobStore;
  /** Base URL of the fs driver's presigned handler; unset for S3. */
  publicBaseUrl?: string;
  teardown(): Promise<void>;
}

interface Driver {
  name: 'fs' | 's3';
  start(): Promise<Harness>;
  /** s3rver 3.7.1 routes DELETE ?uploadId to MethodNotAllowed: it has no AbortMultipartUpload at all. */
  canAbortMultipart: boolean;
}

async function startFsHarness(): Promise<Harness> {
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

const drivers: Driver[] = [
  { name: 'fs', start: startFsHarness, canAbortMultipart: true },
  { name: 's3', start: startS3Harness, canAbortMultipart: false },
];

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Random bytes produced chunk by chunk (never held whole), hashed independently of the store. */
function generatedStream(totalBytes: number): { stream: Readable; digest(): string } {
  const hash = createHash('sha256');
  let digest: string | undefined;
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let remaining = totalBytes; remaining > 0; ) {
      const chunk = randomBytes(Math.min(256 * 1024, remaining));
      hash.update(chunk);
      remaining -= chunk.length;
      yield chunk;
    }
    digest = hash.digest('hex');
  }
  return {
    stream: Readable.from(chunks()),
    digest() {
      if (digest === undefined) throw new Error('stream not fully consumed');
      return digest;
    },
  };
}

describe.each(drivers)('BlobStore conformance: $name driver', ({ name, start, canAbortMultipart }) => {
  let harness: Harness;
  let store: BlobStore;

  beforeAll(async () => {
    harness = await start();
    store = harness.store;
  });

  afterAll(async () => {
    await harness?.teardown();
  });

  it('reports its driver and pings', async () => {
    expect(store.driver).toBe(name);
    await expect(store.ping()).resolves.toBeUndefined();
  });

  describe('put', () => {
    it('stores an empty buffer and an empty stream', async () => {
      const empty = sha256(Buffer.alloc(0));
      await expect(store.put('empty/buffer', Buffer.alloc(0))).resolves.toEqual({
        key: 'empty/buffer',
        size: 0,
        sha256: empty,
      });
      await expect(store.put('empty/stream', Readable.from([]))).resolves.toEqual({
        key: 'empty/stream',
        size: 0,
        sha256: empty,
      });
      const got = await store.get('empty/stream');
      expect(got.size).toBe(0);
      expect(got.totalSize).toBe(0);
      expect(await readAll(got.body)).toHaveLength(0);
      expect(await store.head('empty/buffer')).toMatchObject({ size: 0, sha256: empty });
    });

    it('stores a small buffer and returns its size and sha256', async () => {
      const data = Buffer.from('hello, blob store\n');
      const result = await store.put('small/hello.txt', data, { contentType: 'text/plain' });
      expect(result).toEqual({ key: 'small/hello.txt', size: data.length, sha256: sha256(data) });
      const got = await store.get('small/hello.txt');
      expect(got).toMatchObject({ size: data.length, totalSize: data.length, contentType: 'text/plain' });
      expect(got.range).toBeUndefined();
      expect(await readAll(got.body)).toEqual(data);
    });

    it('streams a 12 MB body (multipart on S3) without knowing its length', async () => {
      const size = 12 * MB + 123;
      const generated = generatedStream(size);
      const result = await store.put('large/twelve.bin', generated.stream, {
        metadata: { origin: 'stream' },
      });
      expect(result).toEqual({ key: 'large/twelve.bin', size, sha256: generated.digest() });

      const got = await store.get('large/twelve.bin');
      expect(got.size).toBe(size);
      expect(got.totalSize).toBe(size);
      const bytes = await readAll(got.body);
      expect(bytes).toHaveLength(size);
      expect(sha256(bytes)).toBe(generated.digest());
      // The sha256 is only known after the last byte, so this checks the restamp on S3.
      expect(await store.head('large/twelve.bin')).toMatchObject({
        size,
        sha256: generated.digest(),
        metadata: { origin: 'stream' },
      });
    });

    it('stores a large buffer in parts with its sha256 known up front', async () => {
      const data = randomBytes(9 * MB);
      await expect(store.put('large/nine.bin', data)).resolves.toEqual({
        key: 'large/nine.bin',
        size: data.length,
        sha256: sha256(data),
      });
      expect(sha256(await readAll((await store.get('large/nine.bin')).body))).toBe(sha256(data));
      expect((await store.head('large/nine.bin'))?.sha256).toBe(sha256(data));
    });

    it('replaces an existing object with new bytes, content type and metadata', async () => {
      await store.put('over/write', Buffer.from('first version, longer'), {
        contentType: 'text/plain',
        metadata: { version: '1', only: 'first' },
      });
      const second = Buffer.from('second');
      await store.put('over/write', second, { contentType: 'application/json', metadata: { version: '2' } });
      expect(await readAll((await store.get('over/write')).body)).toEqual(second);
      expect(await store.head('over/write')).toMatchObject({
        size: second.length,
        contentType: 'application/json',
        sha256: sha256(second),
        metadata: { version: '2' },
      });
      expect((await store.head('over/write'))?.metadata).not.toHaveProperty('only');
    });
  });

  describe('ranges', () => {
    const data = randomBytes(1000);

    beforeAll(async () => {
      await store.put('range/data.bin', data, { contentType: 'application/x-test' });
    });

    it.each([
      ['start-end', { start: 10, end: 19 }, 10, 19],
      ['open end', { start: 990 }, 990, 999],
      ['single last byte', { start: 999, end: 999 }, 999, 999],
      ['end past the size', { start: 995, end: 5000 }, 995, 999],
    ])('reads %s', async (_label, range, start, end) => {
      const got = await store.get('range/data.bin', range);
      expect(got.range).toEqual({ start, end });
      expect(got.size).toBe(end - start + 1);
      expect(got.totalSize).toBe(1000);
      expect(got.contentType).toBe('application/x-test');
      expect(await readAll(got.body)).toEqual(data.subarray(start, end + 1));
    });

    // s3rver 3.7.1 reads `bytes=0-0` as "no end" (it tests the end with `||`) and serves the whole object;
    // real S3 and MinIO serve one byte. The driver refuses the wider answer rather than pass it on.
    (name === 's3' ? it.skip : it)('reads the first byte alone', async () => {
      const got = await store.get('range/data.bin', { start: 0, end: 0 });
      expect(got).toMatchObject({ size: 1, totalSize: 1000, range: { start: 0, end: 0 } });
      expect(await readAll(got.body)).toEqual(data.subarray(0, 1));
    });

    it('rejects a range starting at or past the end', async () => {
      const error = await store.get('range/data.bin', { start: 1000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RangeNotSatisfiableError);
      expect(error).toMatchObject({ key: 'range/data.bin', size: 1000 });
      await expect(store.get('range/data.bin', { start: 5000, end: 6000 })).rejects.toBeInstanceOf(
        RangeNotSatisfiableError,
      );
    });

    it('rejects any range on an empty object', async () => {
      await store.put('range/empty', Buffer.alloc(0));
      await expect(store.get('range/empty', { start: 0 })).rejects.toBeInstanceOf(RangeNotSatisfiableError);
    });

    it('rejects a malformed range as a caller error', async () => {
      await expect(store.get('range/data.bin', { start: 10, end: 5 })).rejects.toBeInstanceOf(RangeError);
      await expect(store.get('range/data.bin', { start: -1 })).rejects.toBeInstanceOf(RangeError);
    });
  });

  describe('head, copy and delete', () => {
    it('heads missing keys as null and existing ones with their attributes', async () => {
      expect(await store.head('missing/nothing-here')).toBeNull();
      const data = Buffer.from('{"a":1}');
      const before = Date.now();
      await store.put('head/doc.json', data, {
        contentType: 'application/json',
        metadata: { 'Uploaded-By': 'alice', project: 'p-1' },
      });
      const head = await store.head('head/doc.json');
      expect(head).toEqual({
        key: 'head/doc.json',
        size: data.length,
        contentType: 'application/json',
        sha256: sha256(data),
        // Names come back lower-cased on every driver, as S3 does.
        metadata: { 'uploaded-by': 'alice', project: 'p-1' },
        lastModified: expect.any(Date),
      });
      // S3's Last-Modified has one-second resolution.
      expect(head?.lastModified.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    });

    it('uses application/octet-stream when no content type is given', async () => {
      await store.put('head/untyped', Buffer.from('x'));
      expect((await store.head('head/untyped'))?.contentType).toBe('application/octet-stream');
    });

    it('copies bytes, content type, metadata and sha256, leaving the source', async () => {
      const data = randomBytes(4096);
      await store.put('copy/source file.bin', data, {
        contentType: 'image/png',
        metadata: { kind: 'thumb' },
      });
      await store.copy('copy/source file.bin', 'copy/nested/target.bin');
      expect(await readAll((await store.get('copy/nested/target.bin')).body)).toEqual(data);
      expect(await store.head('copy/nested/target.bin')).toMatchObject({
        size: data.length,
        contentType: 'image/png',
        sha256: sha256(data),
        metadata: { kind: 'thumb' },
      });
      expect(await readAll((await store.get('copy/source file.bin')).body)).toEqual(data);
      // Copying onto itself is a no-op that keeps the object.
      await store.copy('copy/source file.bin', 'copy/source file.bin');
      expect(await readAll((await store.get('copy/source file.bin')).body)).toEqual(data);
    });

    it('refuses to copy a missing key', async () => {
      await expect(store.copy('copy/missing', 'copy/whatever')).rejects.toBeInstanceOf(BlobNotFoundError);
    });

    it('deletes, after which get fails with BlobNotFoundError', async () => {
      await store.put('delete/me/deep.txt', Buffer.from('bye'));
      await store.delete('delete/me/deep.txt');
      const error = await store.get('delete/me/deep.txt').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BlobNotFoundError);
      expect(error).toMatchObject({ key: 'delete/me/deep.txt' });
      expect(await store.head('delete/me/deep.txt')).toBeNull();
      // The emptied prefix is usable as a key of its own.
      await store.put('delete/me', Buffer.from('now a file'));
      expect(await readAll((await store.get('delete/me')).body)).toEqual(Buffer.from('now a file'));
    });

    it('treats deleting a missing key as success', async () => {
      await expect(store.delete('delete/never-existed')).resolves.toBeUndefined();
    });

    it('gets a missing key as BlobNotFoundError', async () => {
      await expect(store.get('missing/never')).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.get('missing/never', { start: 0, end: 1 })).rejects.toBeInstanceOf(
        BlobNotFoundError,
      );
    });
  });

  describe('keys', () => {
    const invalidKeys = [
      '',
      '/absolute',
      'a/../b',
      '..',
      './a',
      'a//b',
      'trailing/',
      'back\\slash',
      'nul\u0000',
    ];

    it.each(invalidKeys)('rejects %j everywhere', async (key) => {
      await expect(store.put(key, Buffer.from('x'))).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.get(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.head(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.delete(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.copy(key, 'ok')).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.copy('ok', key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.presignGet(key, { expiresIn: 60 })).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.createMultipartUpload(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
    });

    it('accepts spaces, unicode and dots inside segments', async () => {
      const key = 'odd keys/ünïcødé file (1).tar.gz/.hidden';
      await store.put(key, Buffer.from('odd'));
      expect(await readAll((await store.get(key)).body)).toEqual(Buffer.from('odd'));
    });
  });

  describe('presigned URLs', () => {
    it('serves a presigned GET to plain fetch, including ranges', async () => {
      const key = 'presigned/get me ü.bin';
      const data = randomBytes(3000);
      await store.put(key, data, { contentType: 'application/x-thing' });
      const url = await store.presignGet(key, { expiresIn: 60 });

      const whole = await fetch(url);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('application/x-thing');
      expect(Buffer.from(await whole.arrayBuffer())).toEqual(data);

      const partial = await fetch(url, { headers: { Range: 'bytes=100-199' } });
      expect(partial.status).toBe(206);
      expect(partial.headers.get('content-range')).toBe('bytes 100-199/3000');
      expect(Buffer.from(await partial.arrayBuffer())).toEqual(data.subarray(100, 200));
    });

    it('accepts a presigned PUT from plain fetch', async () => {
      const key = 'presigned/uploaded.txt';
      const data = Buffer.from('uploaded through a presigned URL');
      const url = await store.presignPut(key, { expiresIn: 60, contentType: 'text/plain' });
      const response = await fetch(url, {
        method: 'PUT',
        body: data,
        headers: { 'Content-Type': 'text/plain' },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBeTruthy();
      const got = await store.get(key);
      expect(got.contentType).toBe('text/plain');
      expect(await readAll(got.body)).toEqual(data);
    });
  });

  describe('multipart uploads', () => {
    it('assembles parts uploaded through presigned URLs', async () => {
      const key = 'multipart/assembled.bin';
      // S3 requires every part but the last to be at least 5 MB.
      const part1 = randomBytes(5 * MB + 17);
      const part2 = randomBytes(MB + 5);
      const upload = await store.createMultipartUpload(key, {
        contentType: 'model/step',
        metadata: { Source: 'multipart' },
      });
      expect(upload.key).toBe(key);
      const urls = await Promise.all([
        store.presignUploadPart(upload, 1, { expiresIn: 300 }),
        store.presignUploadPart(upload, 2, { expiresIn: 300 }),
      ]);
      // Sent last part first: order comes from the part numbers, not the arrival.
      const etags: string[] = [];
      for (const [index, body] of [
        [1, part2],
        [0, part1],
      ] as const) {
        const response = await fetch(urls[index], { method: 'PUT', body });
        expect(response.status).toBe(200);
        const etag = response.headers.get('etag');
        expect(etag).toBeTruthy();
        etags[index] = etag ?? '';
      }

      const whole = Buffer.concat([part1, part2]);
      const result = await store.completeMultipartUpload(upload, [
        { partNumber: 2, etag: etags[1] },
        { partNumber: 1, etag: etags[0] },
      ]);
      expect(result).toEqual({ key, size: whole.length, sha256: sha256(whole) });

      const got = await store.get(key);
      expect(got.size).toBe(whole.length);
      expect(sha256(await readAll(got.body))).toBe(sha256(whole));
      expect(await store.head(key)).toMatchObject({
        size: whole.length,
        contentType: 'model/step',
        sha256: sha256(whole),
        metadata: { source: 'multipart' },
      });
    });

    (canAbortMultipart ? it : it.skip)('aborts an upload so it can no longer complete', async () => {
      const upload = await store.createMultipartUpload('multipart/aborted.bin');
      const url = await store.presignUploadPart(upload, 1, { expiresIn: 60 });
      const response = await fetch(url, { method: 'PUT', body: Buffer.from('part') });
      const etag = response.headers.get('etag') ?? '';
      await store.abortMultipartUpload(upload);
      await expect(store.completeMultipartUpload(upload, [{ partNumber: 1, etag }])).rejects.toBeInstanceOf(
        MultipartUploadNotFoundError,
      );
      expect(await store.head('multipart/aborted.bin')).toBeNull();
      // Aborting twice is as harmless as deleting twice.
      await expect(store.abortMultipartUpload(upload)).resolves.toBeUndefined();
    });
  });
});

describe('FsBlobStore presigned handler', () => {
  let harness: Harness;
  let store: FsBlobStore;

  beforeAll(async () => {
    harness = await startFsHarness();
    store = harness.store as FsBlobStore;
    await store.put('secured/file.txt', Buffer.from('secret bytes'), { contentType: 'text/plain' });
  });

  afterAll(async () => {
    await harness?.teardown();
  });

  it('rejects a tampered signature, key or expiry', async () => {
    const url = new URL(await store.presignGet('secured/file.txt', { expiresIn: 60 }));
    const badSig = new URL(url);
    badSig.searchParams.set('sig', '0'.repeat(64));
    expect((await fetch(badSig)).status).toBe(403);
    const otherKey = new URL(url.toString().replace('file.txt', 'other.txt'));
    expect((await fetch(otherKey)).status).toBe(403);
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60_000));
    expect((await fetch(later)).status).toBe(403);
    expect((await fetch(url)).status).toBe(200);
  });

  it('rejects expired URLs', async () => {
    const url = await store.presignGet('secured/file.txt', { expiresIn: 60 });
    const options = { signingKey: SIGNING_KEY, publicBaseUrl: harness.publicBaseUrl };
    expect(verifyFsPresignedUrl(url, 'GET', options)).toMatchObject({ ok: true, key: 'secured/file.txt' });
    expect(verifyFsPresignedUrl(url, 'GET', { ...options, now: Date.now() + 61_000 })).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('does not let a GET URL upload or a PUT URL download', async () => {
    const getUrl = await store.presignGet('secured/file.txt', { expiresIn: 60 });
    expect((await fetch(getUrl, { method: 'PUT', body: 'overwrite' })).status).toBe(403);
    const putUrl = await store.presignPut('secured/file.txt', { expiresIn: 60 });
    expect((await fetch(putUrl)).status).toBe(403);
    expect(await readAll((await store.get('secured/file.txt')).body)).toEqual(Buffer.from('secret bytes'));
  });

  it('enforces the presigned content type', async () => {
    const url = await store.presignPut('secured/typed.txt', { expiresIn: 60, contentType: 'text/csv' });
    const wrong = await fetch(url, { method: 'PUT', body: 'a,b', headers: { 'Content-Type': 'text/plain' } });
    expect(wrong.status).toBe(403);
    expect(await store.head('secured/typed.txt')).toBeNull();
  });

  it('answers HEAD, suffix ranges and unsatisfiable ranges like an HTTP server', async () => {
    const url = await store.presignGet('secured/file.txt', { expiresIn: 60 });
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('12');
    expect(head.headers.get('etag')).toBe(`"${sha256(Buffer.from('secret bytes'))}"`);
    const suffix = await fetch(url, { headers: { Range: 'bytes=-5' } });
    expect(suffix.status).toBe(206);
    expect(await suffix.text()).toBe('bytes');
    const unsatisfiable = await fetch(url, { headers: { Range: 'bytes=12-' } });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get('content-range')).toBe('bytes */12');
  });

  it('leaves requests without a signature to the next handler', async () => {
    expect((await fetch(`${harness.publicBaseUrl}/secured/file.txt`)).status).toBe(404);
  });

  it('rejects a part ETag that does not match the stored part', async () => {
    const upload = await store.createMultipartUpload('secured/parts.bin');
    const url = await store.presignUploadPart(upload, 1, { expiresIn: 60 });
    expect((await fetch(url, { method: 'PUT', body: 'part one' })).status).toBe(200);
    await expect(
      store.completeMultipartUpload(upload, [{ partNumber: 1, etag: `"${'0'.repeat(64)}"` }]),
    ).rejects.toThrow(/does not match/);
    expect(await store.head('secured/parts.bin')).toBeNull();
  });
});
