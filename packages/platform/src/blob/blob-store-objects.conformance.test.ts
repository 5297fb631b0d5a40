import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { drivers, MB, readAll, sha256, useHarness } from '#test/blob-harness';
import {
  BlobNotFoundError,
  type BlobStore,
  InvalidBlobKeyError,
  RangeNotSatisfiableError,
} from './blob-store';

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

describe.each(drivers)('BlobStore conformance: $name driver', ({ name, start }) => {
  let store: BlobStore;
  useHarness(start, (harness) => {
    store = harness.store;
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

    it('keeps the stored object when a long stream fails after several parts', async () => {
      await store.put('large/kept.bin', Buffer.from('the released revision'));
      const failing = Readable.from(
        (async function* body() {
          for (let sent = 0; sent < 20 * MB; sent += MB) yield randomBytes(MB);
          throw new Error('client went away');
        })(),
      );
      await expect(store.put('large/kept.bin', failing)).rejects.toThrow('client went away');
      expect((await readAll((await store.get('large/kept.bin')).body)).toString()).toBe(
        'the released revision',
      );
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

    it('reads the bytes alone (read) as get does: whole, a range, a missing key', async () => {
      expect(await readAll((await store.read('range/data.bin')).body)).toEqual(data);
      const got = await store.read('range/data.bin', { start: 100, end: 199 });
      expect(got).toMatchObject({ size: 100, totalSize: 1000, range: { start: 100, end: 199 } });
      expect(await readAll(got.body)).toEqual(data.subarray(100, 200));
      await expect(store.read('range/none.bin')).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.read('range/data.bin', { start: 1000 })).rejects.toBeInstanceOf(
        RangeNotSatisfiableError,
      );
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

  describe('reads of immutable keys', () => {
    // The process's open descriptors (/dev/fd: Linux and macOS alike).
    const openDescriptors = () => (name === 'fs' ? readdirSync('/dev/fd').length : 0);

    it('give the same bytes as plain reads, also many ranges at once and after an abandoned read', async () => {
      const key = 'kept/model.bin';
      const content = randomBytes(256 * 1024);
      await store.put(key, content);
      const before = openDescriptors();
      const ranges = Array.from({ length: 40 }, (_, i) => ({ start: i * 6_000, end: i * 6_000 + 9_999 }));
      const parts = await Promise.all(
        ranges.map(async (range) => readAll((await store.read(key, range, { immutable: true })).body)),
      );
      for (const [i, part] of parts.entries())
        expect(part).toEqual(content.subarray(ranges[i].start, ranges[i].end + 1));
      // A reader that gives up half-way must not take the kept descriptor with it.
      const abandoned = await store.read(key, { start: 0 }, { immutable: true });
      abandoned.body.destroy();
      expect(await readAll((await store.read(key, undefined, { immutable: true })).body)).toEqual(content);
      const whole = await store.read(key, undefined, { immutable: true });
      expect([whole.size, whole.totalSize]).toEqual([content.length, content.length]);
      await readAll(whole.body);
      // The local store keeps one descriptor for the key, not one per read.
      expect(openDescriptors() - before).toBeLessThanOrEqual(1);
      await expect(store.read(key, { start: content.length }, { immutable: true })).rejects.toBeInstanceOf(
        RangeNotSatisfiableError,
      );
    });

    it('give an empty body for an empty object and keep serving the key after', async () => {
      const key = 'kept/empty.bin';
      await store.put(key, Buffer.alloc(0));
      const empty = await store.read(key, undefined, { immutable: true });
      expect([empty.size, empty.totalSize]).toEqual([0, 0]);
      expect((await readAll(empty.body)).length).toBe(0);
      await expect(store.read(key, { start: 0 }, { immutable: true })).rejects.toBeInstanceOf(
        RangeNotSatisfiableError,
      );
      await store.put(key, Buffer.from('now with bytes'));
      expect((await readAll((await store.read(key, undefined, { immutable: true })).body)).toString()).toBe(
        'now with bytes',
      );
    });

    it('see a key replaced or deleted through the store', async () => {
      const key = 'kept/replaced.bin';
      await store.put(key, Buffer.from('first'));
      const read = async () => readAll((await store.read(key, undefined, { immutable: true })).body);
      expect((await read()).toString()).toBe('first');
      await store.put(key, Buffer.from('second, longer'));
      expect((await read()).toString()).toBe('second, longer');
      await store.delete(key);
      await expect(read()).rejects.toBeInstanceOf(BlobNotFoundError);
    });
  });
});
