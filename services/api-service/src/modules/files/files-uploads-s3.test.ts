import { connect } from 'node:net';
import { expectEventually, listen } from '@hwp/platform/test-kit';
import { signUp } from '#test/api-test-kit';
import { bytes, startFilesApi } from '#test/files-test-setup';

// Issue 34, finding 8, production mode: a streamed upload past one S3 part (8 MiB) is an S3
// multipart upload; cut off mid-body, it is aborted, and the bucket is as it was.
let stack: Awaited<ReturnType<typeof startFilesApi>>;
beforeAll(async () => {
  stack = await startFilesApi({ MAX_UPLOAD_MB: '30' });
}, 60_000);
afterAll(() => stack?.stop());

test('an upload cut off after 12 of 25 MB leaves no object and no multipart upload', async () => {
  const user = await signUp(stack.api.app);
  const objects = await stack.s3.keys();
  const server = await listen(stack.api.app);
  const url = new URL(server.url);
  const boundary = 'cutoffboundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /files/upload HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${user.token}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${Buffer.byteLength(head) + 25 * 1024 * 1024 + 100}\r\n\r\n${head}`,
  );
  for (let i = 0; i < 12; i++) socket.write(bytes(1024 * 1024));
  // Until S3 has the upload open: the first part is on its way.
  await expectEventually(async () => expect((await stack.s3.multipartUploads()).length).toBeGreaterThan(0), {
    timeoutMs: 10_000,
  });
  socket.destroy();
  await expectEventually(async () => expect(await stack.s3.multipartUploads()).toEqual([]), {
    timeoutMs: 10_000,
  });
  expect(await stack.s3.keys()).toEqual(objects);
  await server.close();
});
