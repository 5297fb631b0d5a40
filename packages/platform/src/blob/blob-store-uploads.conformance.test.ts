import { randomBytes } from 'node:crypto';
import { drivers, MB, readAll, sha256, useHarness } from '#test/blob-harness';
import { type BlobStore, MultipartUploadNotFoundError } from './blob-store';

describe.each(drivers)('BlobStore conformance: $name driver', ({ start, canAbortMultipart }) => {
  let store: BlobStore;
  useHarness(start, (harness) => {
    store = harness.store;
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
