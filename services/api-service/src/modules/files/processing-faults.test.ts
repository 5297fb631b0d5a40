import type { FileRecord } from '@hwp/contracts';
import { expectEventually, listen } from '@hwp/platform/test-kit';
import sharp from 'sharp';
import request from 'supertest';
import { type ApiTestService, as, signUp, startApi, type TestUser } from '#test/api-test-kit';
import { upload } from '#test/factories';
import { previewKey } from './file-processing';

// Issue 34, finding 3: a file whose processing event died (dead-lettered, its process killed) is
// requeued, or ends failed with the reason; never pending for good. /readyz says so meanwhile.
let api: ApiTestService;
beforeAll(async () => {
  api = await startApi({
    // Well past any real processing here (a busy machine included): only the stalls below are stale.
    PROCESSING_STUCK_AFTER_MS: '60000',
    PROCESSING_SWEEP_MS: '200',
    PROCESSING_MAX_REQUEUES: '1',
  });
}, 60_000);
afterAll(() => api?.stop());

async function processed(user: TestUser, name: string): Promise<FileRecord> {
  const file = await upload(as(api.app, user), name, 'plain text content');
  await expectEventually(async () =>
    expect((await as(api.app, user).get(`/files/${file.id}`)).body.processing_status).toBe('ready'),
  );
  return file;
}

/** As if the file's event had been dead-lettered mid-processing an hour ago. */
async function stall(file: FileRecord, requeues: number): Promise<void> {
  await api.deps.dataSource.query(
    `UPDATE file_revisions SET processing_status = 'processing', stages = '{}',
            processing_since = now() - interval '1 hour', processing_requeues = $2
      WHERE id = $1`,
    [file.current_revision_id, requeues],
  );
}

test('a stalled file is requeued and processed; /readyz is degraded until then', async () => {
  const user = await signUp(api.app);
  const file = await processed(user, 'stalled.txt');
  // The sweep is paused by holding the row, so /readyz can be read while the file is stalled.
  const runner = api.deps.dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  try {
    await stall(file, 0);
    await runner.query('SELECT 1 FROM file_revisions WHERE id = $1 FOR UPDATE', [file.current_revision_id]);
    const ready = await request(api.app).get('/readyz').expect(200);
    expect(ready.body.status).toBe('degraded');
    expect(ready.body.checks.processing).toMatch(/^degraded: 1 file\(s\) still processing/);
  } finally {
    await runner.commitTransaction();
    await runner.release();
  }
  await expectEventually(async () => {
    const record = (await as(api.app, user).get(`/files/${file.id}`)).body as FileRecord;
    expect([record.processing_status, record.processing_error]).toEqual(['ready', null]);
  });
  const [row] = await api.deps.dataSource.query(
    'SELECT processing_requeues FROM file_revisions WHERE id = $1',
    [file.current_revision_id],
  );
  expect(row.processing_requeues).toBe(1);
  await expectEventually(async () =>
    expect((await request(api.app).get('/readyz')).body.checks.processing).toBe('ok'),
  );
});

test('past its requeues a stalled file ends failed, with the reason in its record', async () => {
  const user = await signUp(api.app);
  const file = await processed(user, 'given-up.txt');
  await stall(file, 1);
  await expectEventually(async () => {
    const record = (await as(api.app, user).get(`/files/${file.id}`)).body as FileRecord;
    expect([record.processing_status, record.processing_error]).toEqual([
      'failed',
      'Processing did not finish in 2 attempts',
    ]);
  });
});

async function final(user: TestUser, id: string): Promise<FileRecord> {
  let record: FileRecord | undefined;
  await expectEventually(async () => {
    record = (await as(api.app, user).get(`/files/${id}`)).body as FileRecord;
    expect(['ready', 'failed', 'quarantined']).toContain(record.processing_status);
  });
  return record as FileRecord;
}

test('the built-in check finds EICAR anywhere in the file, not only in its first and last 64 KiB', async () => {
  const user = await signUp(api.app);
  const eicar = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');
  const padding = 'a'.repeat(100 * 1024);
  const file = await upload(as(api.app, user), 'notes.txt', `${padding}${eicar}${padding}`);
  expect((await final(user, file.id)).processing_status).toBe('quarantined');
});

test('with the local blob folder, a part URL refuses any size but the one it was issued for', async () => {
  const user = await signUp(api.app);
  const server = await listen(api.app);
  try {
    const started = await as(api.app, user)
      .post('/files/upload-url')
      .send({ name: 'tiny.bin', size: 1, folder_path: '/' })
      .expect(201);
    // The URL names the configured public base; the test's server has another port.
    const url = new URL(started.body.parts[0].url);
    const local = `${server.url}${url.pathname}${url.search}`;
    const bigger = await fetch(local, { method: 'PUT', body: Buffer.alloc(250 * 1024, 7) });
    expect(bigger.status).toBe(403);
    const exact = await fetch(local, { method: 'PUT', body: Buffer.from('x') });
    expect(exact.status).toBe(200);
    const completed = await as(api.app, user)
      .post('/files/upload-complete')
      .send({
        upload_id: started.body.upload_id,
        parts: [{ part_number: 1, etag: exact.headers.get('etag') }],
      });
    expect([completed.status, completed.body.size]).toEqual([201, 1]);
  } finally {
    await server.close();
  }
});

test('a file deleted while its previews are drawn leaves no preview behind', async () => {
  const user = await signUp(api.app);
  const { dataSource, blobs } = api.deps;
  // The revision is gone when processing records its previews (as when the file is deleted then).
  await dataSource.query(
    `CREATE FUNCTION gone_at_preview() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
     CREATE TRIGGER gone_at_preview BEFORE UPDATE ON file_revisions FOR EACH ROW
       WHEN (NEW.stages ? 'preview' AND NOT OLD.stages ? 'preview') EXECUTE FUNCTION gone_at_preview();`,
  );
  try {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    const file = await upload(as(api.app, user), 'drawn.png', png);
    const [{ tenant_id: tenant }] = await dataSource.query('SELECT tenant_id FROM files WHERE id = $1', [
      file.id,
    ]);
    // Waited for in the database (polling the API would meet its rate limit on a slow machine).
    await expectEventually(
      async () => {
        const [row] = await dataSource.query('SELECT processing_status FROM file_revisions WHERE id = $1', [
          file.current_revision_id,
        ]);
        expect(['ready', 'failed', 'quarantined']).toContain(row.processing_status);
      },
      { timeoutMs: 30_000 },
    );
    for (const kind of ['preview', 'thumbnail'] as const) {
      expect(await blobs.head(previewKey(tenant, file.current_revision_id, kind))).toBeNull();
    }
  } finally {
    await dataSource.query(
      'DROP TRIGGER IF EXISTS gone_at_preview ON file_revisions; DROP FUNCTION IF EXISTS gone_at_preview()',
    );
  }
});
