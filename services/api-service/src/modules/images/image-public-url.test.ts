import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ImageOperationResult } from '@hwp/contracts';
import sharp from 'sharp';
import { type ApiTestService, as, signUp, startApi } from '#test/api-test-kit';
import { upload } from '#test/factories';

// Issue 35: with PUBLIC_API_URL set, the URLs the API host hands out start with it, however the
// request reached the host (here: supertest on a loopback port of its own).
const PUBLIC_API_URL = 'https://plm.example.test';
let api: ApiTestService;
let blobDir: string;
beforeAll(async () => {
  blobDir = await mkdtemp(path.join(tmpdir(), 'blobs-'));
  api = await startApi({ PUBLIC_API_URL: `${PUBLIC_API_URL}/`, BLOB_DIR: blobDir });
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await rm(blobDir, { recursive: true, force: true });
});

const square = () =>
  sharp({ create: { width: 40, height: 30, channels: 3, background: '#c01818' } })
    .png()
    .toBuffer();

test('generated_images are URLs under PUBLIC_API_URL, and such a URL is taken back as a source', async () => {
  const user = await signUp(api.app);
  const client = as(api.app, user);
  const source = await upload(client, 'square.png', await square());
  const first = await client.post('/imgtool-remove-background').send({ reference_image: source.url });
  expect(first.status).toBe(200);
  const op = first.body as ImageOperationResult;
  expect(op.generated_images).toEqual([
    expect.stringMatching(/^https:\/\/plm\.example\.test\/files\/[0-9a-f-]{36}\/download$/),
  ]);
  // The absolute URL names one of this host's files: it is read from storage, not fetched.
  const again = await client
    .post('/imgtool-remove-background')
    .send({ reference_image: op.generated_images[0] });
  expect([again.status, again.body.status]).toEqual([200, 'COMPLETED']);
  const stored = await client.get(new URL(op.generated_images[0]).pathname);
  expect(stored.status).toBe(200);
});

test('pre-signed part URLs and the OpenAPI server name PUBLIC_API_URL', async () => {
  const user = await signUp(api.app);
  const started = await as(api.app, user).post('/files/upload-url').send({ name: 'big.bin', size: 10 });
  expect(started.status).toBe(201);
  expect(started.body.parts[0].url).toMatch(/^https:\/\/plm\.example\.test\/blobs\//);
  const document = await as(api.app, user).get('/openapi.json');
  expect(document.body.servers).toEqual([
    { url: PUBLIC_API_URL, description: 'Where clients reach this host' },
  ]);
});
