import { type Harness, readAll, SIGNING_KEY, sha256, startFsHarness, useHarness } from '#test/blob-harness';
import { type FsBlobStore, verifyFsPresignedUrl } from './fs-blob-store';

describe('FsBlobStore presigned handler', () => {
  let harness: Harness;
  let store: FsBlobStore;

  useHarness(startFsHarness, (started) => {
    harness = started;
    store = harness.store as FsBlobStore;
  });

  beforeAll(async () => {
    await store.put('secured/file.txt', Buffer.from('secret bytes'), { contentType: 'text/plain' });
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
