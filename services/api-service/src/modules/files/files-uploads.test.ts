import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import type { Annotation, FileRecord } from '@hwp/contracts';
import { expectEventually, listen } from '@hwp/platform/test-kit';
import { as, signUp } from '#test/api-test-kit';
import { team, upload } from '#test/factories';
import { binary, bytes, inTenant, startFilesApi } from '#test/files-test-setup';
import { apiService } from '../../service';
import type { FilesExports } from './files.feature';

let stack: Awaited<ReturnType<typeof startFilesApi>>;
beforeAll(async () => {
  stack = await startFilesApi({ MAX_UPLOAD_MB: '1' });
}, 60_000);
afterAll(() => stack?.stop());

const MB = 1024 * 1024;

/** Sends the head of a multipart upload of `announced` bytes, `sent` of them, then cuts the connection. */
async function cutOffUpload(token: string, announced: number, sent: number): Promise<void> {
  const server = await listen(stack.api.app);
  const url = new URL(server.url);
  const boundary = 'cutoffboundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /files/upload HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${Buffer.byteLength(head) + announced + Buffer.byteLength(tail)}\r\n\r\n${head}`,
  );
  socket.write(bytes(sent));
  await new Promise((resolve) => setTimeout(resolve, 300));
  socket.destroy();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await server.close();
}

describe('limits and failures', () => {
  test('a multipart body without a boundary (or with a broken type) is 400 on every upload route', async () => {
    const user = await signUp(stack.api.app);
    for (const path of ['/files/upload', '/files/multiple-upload']) {
      for (const type of ['multipart/form-data', 'multipart/form-data; boundary=']) {
        const res = await as(stack.api.app, user).post(path).set('Content-Type', type).send('file=abc');
        expect([path, type, res.status, res.body.code]).toEqual([path, type, 400, 'validation_failed']);
      }
    }
  });

  test('thirty uploads at once (S3, RabbitMQ) while another user reads: no 5xx, every file final', async () => {
    const [uploader, reader] = await Promise.all([signUp(stack.api.app), signUp(stack.api.app)]);
    await upload(as(stack.api.app, reader), 'mine.txt', 'reader file');
    let reading = true;
    const statuses: number[] = [];
    const reads = (async () => {
      while (reading) statuses.push((await as(stack.api.app, reader).get('/files')).status);
    })();
    const uploaded = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        upload(as(stack.api.app, uploader), `crowd-${i}.txt`, `file ${i} text`),
      ),
    );
    await expectEventually(
      async () => {
        const list = await as(stack.api.app, uploader).get('/files?pageSize=100');
        const states = (list.body.items as FileRecord[]).map((f) => f.processing_status);
        expect(states.filter((s) => s === 'ready')).toHaveLength(uploaded.length);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    reading = false;
    await reads;
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  });

  test('an upload cut off halfway leaves no record and no object', async () => {
    const user = await signUp(stack.api.app);
    const tenantId = (await upload(as(stack.api.app, user), 'keep.txt', 'kept')).tenant_id;
    const before = await stack.s3.keys(`tenants/${tenantId}/`);
    expect(before).toHaveLength(1);
    await cutOffUpload(user.token, 900_000, 400_000);
    await expectEventually(async () => expect(await stack.s3.keys(`tenants/${tenantId}/`)).toEqual(before));
    const listed = await as(stack.api.app, user).get('/files');
    expect(listed.body.items.map((f: FileRecord) => f.name)).toEqual(['keep.txt']);
  });

  test('over MAX_UPLOAD_MB: 413, announced or streamed, and nothing stays', async () => {
    const user = await signUp(stack.api.app);
    const client = as(stack.api.app, user);
    const streamed = await client.post('/files/upload').attach('file', bytes(MB + 10), 'big.bin');
    expect(streamed.status).toBe(413);
    expect(streamed.body.code).toBe('payload_too_large');
    const announced = await client
      .post('/files/upload')
      .set('Content-Type', 'multipart/form-data; boundary=x')
      .set('Content-Length', String(5 * MB))
      .send('--x\r\n');
    expect(announced.status).toBe(413);
    expect((await client.get('/files')).body.total).toBe(0);
    const tenantId = (await client.get('/tenant/current')).body.id as string;
    await expectEventually(async () => expect(await stack.s3.keys(`tenants/${tenantId}/`)).toEqual([]));
  });

  test('multiple-upload stores each file or says why not, and refuses more than 20', async () => {
    const user = await signUp(stack.api.app);
    const client = as(stack.api.app, user);
    await upload(client, 'taken.txt', 'x');
    const res = await client
      .post('/files/multiple-upload')
      .field('folder_path', '/batch')
      .attach('files', Buffer.from('one'), 'one.txt')
      .attach('files', Buffer.from('two'), 'two.txt')
      .attach('files', Buffer.from('again'), 'one.txt');
    expect(res.status).toBe(200);
    expect(
      res.body.items.map((i: { name: string; status: number; code?: string }) => [i.name, i.status, i.code]),
    ).toEqual([
      ['one.txt', 201, undefined],
      ['two.txt', 201, undefined],
      ['one.txt', 409, 'conflict'],
    ]);
    expect(res.body.items[0].file.path).toBe('/batch/one.txt');
    let many = client.post('/files/multiple-upload');
    for (let i = 0; i < 21; i++) many = many.attach('files', Buffer.from(`${i}`), `f${i}.txt`);
    const tooMany = await many;
    expect(tooMany.status).toBe(400);
    expect((await client.get('/files').query({ folder_path: '/batch' })).body.total).toBe(2);
  });
});

describe('large uploads (pre-signed multipart)', () => {
  test('a part URL takes exactly the size it was issued for (signed Content-Length)', async () => {
    const user = await signUp(stack.api.app);
    const started = await as(stack.api.app, user)
      .post('/files/upload-url')
      .send({ name: 'tiny.bin', size: 1, folder_path: '/' })
      .expect(201);
    expect(started.body.parts).toEqual([{ part_number: 1, size: 1, url: expect.any(String) }]);
    const url = started.body.parts[0].url as string;
    // S3 refuses a part whose Content-Length is not the signed one (s3rver does not check it: the
    // local folder's handler is tested for the refusal in processing-faults.test.ts).
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toContain('content-length');
    const exact = await fetch(url, { method: 'PUT', body: bytes(1) });
    expect(exact.status).toBe(200);
  });

  test('uploads their clients abandoned (or a killed process left) are aborted by the sweep', async () => {
    const user = await signUp(stack.api.app);
    const objectsBefore = await stack.s3.keys();
    const uploadsBefore = await stack.s3.multipartUploads();
    const started = await as(stack.api.app, user)
      .post('/files/upload-url')
      .send({ name: 'abandoned.bin', size: 100, folder_path: '/' })
      .expect(201);
    const put = await fetch(started.body.parts[0].url, { method: 'PUT', body: bytes(100) });
    expect(put.status).toBe(200);
    // A process killed mid-upload: a multipart upload with a part and no row anywhere.
    const { blobs } = stack.api.deps;
    const orphan = await blobs.createMultipartUpload(`tenants/${started.body.upload_id}/files/orphan`);
    expect(
      (
        await fetch(await blobs.presignUploadPart(orphan, 1, { expiresIn: 60 }), {
          method: 'PUT',
          body: bytes(50),
        })
      ).status,
    ).toBe(200);
    expect(await stack.s3.multipartUploads()).toHaveLength(uploadsBefore.length + 2);

    const { largeUploads } = apiService.exportsOf<FilesExports>(stack.api.deps, 'files');
    // Within their hour nothing is touched.
    expect(await largeUploads.sweepExpired(stack.api.deps.dataSource)).toBe(0);
    expect(await stack.s3.multipartUploads()).toHaveLength(uploadsBefore.length + 2);
    // Two hours on, both are gone (and any earlier test's unfinished one): the objects are as they were.
    const later = new Date(Date.now() + 2 * 60 * 60 * 1000);
    expect(await largeUploads.sweepExpired(stack.api.deps.dataSource, later)).toBeGreaterThanOrEqual(2);
    expect(await stack.s3.multipartUploads()).toEqual([]);
    expect(await stack.s3.keys()).toEqual(objectsBefore);
    const complete = await as(stack.api.app, user)
      .post('/files/upload-complete')
      .send({
        upload_id: started.body.upload_id,
        parts: [{ part_number: 1, etag: put.headers.get('etag') }],
      });
    expect(complete.status).toBe(404);
  });

  test('parts go straight to storage; completing registers the file; a second complete or a wrong size is refused', async () => {
    const [user, other] = [await signUp(stack.api.app), await signUp(stack.api.app)];
    const client = as(stack.api.app, user);
    const content = bytes(700_000);
    const started = await client
      .post('/files/upload-url')
      .send({ name: 'scan.ply', size: content.length, folder_path: '/scans' });
    expect(started.status).toBe(201);
    expect(started.body.parts).toHaveLength(1);
    const put = await fetch(started.body.parts[0].url, { method: 'PUT', body: content });
    expect(put.status).toBe(200);
    const etag = put.headers.get('etag') ?? '';
    const parts = [{ part_number: 1, etag }];

    expect(
      (
        await as(stack.api.app, other)
          .post('/files/upload-complete')
          .send({ upload_id: started.body.upload_id, parts })
      ).status,
    ).toBe(404);
    const done = await client
      .post('/files/upload-complete')
      .send({ upload_id: started.body.upload_id, parts, tags: ['scan'] });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({
      path: '/scans/scan.ply',
      size: content.length,
      tags: ['scan'],
      sha256: createHash('sha256').update(content).digest('hex'),
    });
    const back = await client.get(done.body.url).buffer(true).parse(binary);
    expect(Buffer.compare(back.body as Buffer, content)).toBe(0);
    expect(
      (await client.post('/files/upload-complete').send({ upload_id: started.body.upload_id, parts })).status,
    ).toBe(404);

    const short = await client.post('/files/upload-url').send({ name: 'short.bin', size: 1000 });
    const shortPut = await fetch(short.body.parts[0].url, { method: 'PUT', body: bytes(10) });
    const wrong = await client.post('/files/upload-complete').send({
      upload_id: short.body.upload_id,
      parts: [{ part_number: 1, etag: shortPut.headers.get('etag') }],
    });
    expect(wrong.status).toBe(400);
    expect((await client.get('/files').query({ q: 'short' })).body.total).toBe(0);

    expect((await client.post('/files/upload-url').send({ name: 'huge.bin', size: 2 * MB })).status).toBe(
      413,
    );
    expect((await client.post('/files/upload-url').send({ name: '../x', size: 10 })).status).toBe(400);
  });
});

describe('annotations', () => {
  test('members annotate and reply; status moves follow open <-> in-progress -> resolved -> open', async () => {
    const { owner, member, tenant } = await team(stack.api);
    const asOwner = inTenant(stack.api, owner, tenant.id);
    const asMember = inTenant(stack.api, member, tenant.id);
    const file = await upload(asOwner, 'housing.step', 'ISO-10303-21;');
    const created = await asMember.post(`/files/${file.id}/annotations`).send({
      text: 'Wall too thin',
      position: { x: 1.5, y: -2, z: 0 },
      target: { type: 'component', component_id: 'rib-3' },
      color: '#FF8800',
    });
    expect(created.status).toBe(201);
    const annotation = created.body as Annotation;
    expect(annotation).toMatchObject({
      file_id: file.id,
      user_id: member.user.id,
      status: 'open',
      color: '#ff8800',
      target: { type: 'component', component_id: 'rib-3' },
      revision_id: file.current_revision_id,
      replies: [],
    });
    const replied = await asOwner
      .post(`/files/${file.id}/annotations/${annotation.id}/replies`)
      .send({ text: 'Agreed, 2 mm' });
    expect(replied.status).toBe(201);
    expect(replied.body.replies).toEqual([
      expect.objectContaining({ user_id: owner.user.id, text: 'Agreed, 2 mm' }),
    ]);

    const path = `/files/${file.id}/annotations/${annotation.id}`;
    const skip = await asMember.patch(path).send({ status: 'resolved' });
    expect(skip.status).toBe(409);
    expect(skip.body).toMatchObject({ code: 'conflict', status: 'open', allowed: ['in-progress'] });
    for (const status of ['in-progress', 'resolved', 'open'] as const) {
      const moved = await asMember.patch(path).send({ status });
      expect({ status, code: moved.status, now: moved.body.status }).toEqual({
        status,
        code: 200,
        now: status,
      });
    }
    const listed = await asOwner.get(`/files/${file.id}/annotations`);
    expect(listed.body).toMatchObject({
      total: 1,
      items: [{ id: annotation.id, status: 'open', replies: [{ text: 'Agreed, 2 mm' }] }],
    });
  });

  test('a missing component id, a bad color or NaN positions are refused', async () => {
    const user = await signUp(stack.api.app);
    const file = await upload(as(stack.api.app, user), 'p.stl', 'solid p');
    const post = (body: object) => as(stack.api.app, user).post(`/files/${file.id}/annotations`).send(body);
    expect(
      (await post({ text: 'x', position: { x: 0, y: 0, z: 0 }, target: { type: 'component' } })).status,
    ).toBe(400);
    expect((await post({ text: 'x', position: { x: 0, y: 0, z: 0 }, color: 'red' })).status).toBe(400);
    expect((await post({ text: 'x', position: { x: 0, y: 'a', z: 0 } })).status).toBe(400);
    expect((await post({ text: '', position: { x: 0, y: 0, z: 0 } })).status).toBe(400);
    expect((await post({ text: 'x', position: { x: 0, y: 0, z: 0 }, status: 'closed' })).status).toBe(400);
  });

  test('an annotation may be created in any status section 2.5 lists', async () => {
    const user = await signUp(stack.api.app);
    const file = await upload(as(stack.api.app, user), 'q.stl', 'solid q');
    for (const status of ['open', 'in-progress', 'resolved']) {
      const res = await as(stack.api.app, user)
        .post(`/files/${file.id}/annotations`)
        .send({ text: status, position: { x: 1, y: 2, z: 3 }, color: '#00ff00', status });
      expect([res.status, res.body.status]).toEqual([201, status]);
    }
    const listed = await as(stack.api.app, user).get(`/files/${file.id}/annotations`);
    expect(listed.body.items.map((a: { status: string }) => a.status).sort()).toEqual([
      'in-progress',
      'open',
      'resolved',
    ]);
  });
});
