import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expectEventually, listen } from '@hwp/platform/test-kit';
import { type ApiTestService, as, signUp, startApi, type TestUser } from '#test/api-test-kit';
import { upload } from '#test/factories';
import { bytes } from '#test/files-test-setup';
import { apiService } from '../../service';
import type { FilesExports } from './files.feature';

// Issue 34, finding 8, in the embedded mode (the local folder): an upload cut off or over a limit,
// and one its client abandoned (after the sweep), leave the folder as it was.
let api: ApiTestService;
let blobDir: string;
beforeAll(async () => {
  blobDir = await mkdtemp(path.join(tmpdir(), 'blobs-'));
  api = await startApi({ MAX_UPLOAD_MB: '1', BLOB_DIR: blobDir });
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await rm(blobDir, { recursive: true, force: true });
});

const MB = 1024 * 1024;

/** Every file in the blob folder (objects, sidecars, temp files, multipart staging). */
async function filesInFolder(): Promise<string[]> {
  const entries = await readdir(blobDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(blobDir, path.join(e.parentPath, e.name)))
    .sort();
}

/** Sends `sent` of an announced `announced`-byte upload to `route`, then cuts the connection. */
async function cutOff(user: TestUser, route: string, field: string, announced: number, sent: number) {
  const server = await listen(api.app);
  const url = new URL(server.url);
  const boundary = 'cutoffboundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="half.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST ${route} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${user.token}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${Buffer.byteLength(head) + announced + 100}\r\n\r\n${head}`,
  );
  socket.write(bytes(sent));
  await new Promise((resolve) => setTimeout(resolve, 300));
  socket.destroy();
  await server.close();
}

test('uploads cut off or over a limit leave the folder as it was', async () => {
  const user = await signUp(api.app);
  const client = as(api.app, user);
  await upload(client, 'keep.txt', 'kept');
  const before = await filesInFolder();
  expect(before.length).toBeGreaterThan(0);

  await cutOff(user, '/files/upload', 'file', 900_000, 400_000);
  await cutOff(user, '/files/multiple-upload', 'files', 900_000, 300_000);
  const big = await client.post('/files/upload').attach('file', bytes(MB + 10), 'big.bin');
  expect([big.status, big.body.code]).toEqual([413, 'payload_too_large']);
  const bigInBatch = await client
    .post('/files/multiple-upload')
    .attach('files', bytes(1000), 'small.bin')
    .attach('files', bytes(MB + 10), 'big.bin');
  expect(bigInBatch.status).toBe(413);
  let many = client.post('/files/multiple-upload');
  for (let i = 0; i < 21; i++) many = many.attach('files', bytes(5000), `f${i}.bin`);
  expect((await many).status).toBe(400);

  await expectEventually(async () => expect(await filesInFolder()).toEqual(before));
  expect((await client.get('/files')).body.total).toBe(1);
});

test('a part URL takes only its size; a wrong total or an abandoned upload leaves nothing', async () => {
  const user = await signUp(api.app);
  const client = as(api.app, user);
  const before = await filesInFolder();
  const server = await listen(api.app);
  // The part URLs name the configured host; the test's server listens elsewhere.
  const local = (issued: string) => {
    const url = new URL(issued);
    return `${server.url}${url.pathname}${url.search}`;
  };

  const tiny = await client.post('/files/upload-url').send({ name: 'tiny.bin', size: 1 }).expect(201);
  const refused = await fetch(local(tiny.body.parts[0].url), { method: 'PUT', body: bytes(250_000) });
  expect(refused.status).toBe(403);

  const short = await client.post('/files/upload-url').send({ name: 'short.bin', size: 1000 }).expect(201);
  // A URL signed for 1000 bytes takes no other count, so the wrong total comes from a forged length:
  // the part is sent as issued, then complete is asked with a part that does not exist.
  const put = await fetch(local(short.body.parts[0].url), { method: 'PUT', body: bytes(1000) });
  expect(put.status).toBe(200);
  const wrong = await client.post('/files/upload-complete').send({
    upload_id: short.body.upload_id,
    parts: [{ part_number: 1, etag: 'not-the-etag' }],
  });
  expect(wrong.status).toBe(400);

  // tiny.bin was never completed: the sweep, two hours on, removes its staging.
  const { largeUploads } = apiService.exportsOf<FilesExports>(api.deps, 'files');
  await largeUploads.sweepExpired(api.deps.dataSource, new Date(Date.now() + 2 * 60 * 60 * 1000));
  expect(await filesInFolder()).toEqual(before);
  expect((await client.get('/files')).body.total).toBe(0);
  await server.close();
});
