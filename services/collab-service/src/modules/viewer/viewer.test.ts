import { join } from 'node:path';
import type { ModelLookup, Translation, TranslationStatusEntry } from '@hwp/contracts';
import { RoutingKeys } from '@hwp/contracts';
import { readGlb, stepBoxes } from '@hwp/geometry';
import { binary, expectEventually, listen } from '@hwp/platform/test-kit';
import { binaryStl, boxTriangles } from '../../../../api-service/test/support/cad-fixtures';
import { type Stack, startStack, type Team, teamWorkspace } from '../../../test/support/collab-test-kit';
import { filesKit } from '../../../test/support/shared-files-kit';
import { SseClient } from '../../../test/support/sse-client';
import { collabService } from '../../service';
import type { ViewerExports } from './viewer.feature';

let stack: Stack;
let server: Awaited<ReturnType<typeof listen>>;
let t: Team;
let kit: ReturnType<typeof filesKit>;
let folder: string;
beforeAll(async () => {
  // A short lease: a job whose process died is swept within about two seconds.
  stack = await startStack({
    collab: {
      UPLOADS_PER_MINUTE: '1000',
      TRANSLATION_LEASE_MS: '1500',
      // Where clients reach the host, whatever address the test's requests use (issue 35).
      PUBLIC_COLLAB_URL: 'https://collab.example.test',
    },
  });
  server = await listen(stack.collab.app);
  t = await teamWorkspace(stack, 'viewer');
  kit = filesKit(stack, t);
  folder = await kit.username(t.engineer);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await stack?.stop();
});

const translate = (filename: string, extra: Record<string, unknown> = {}) =>
  kit
    .as(t.viewer)
    .post('/api/viewer/translate-file')
    .send({ workspace: t.workspace, filename: `${folder}/${filename}`, ...extra });

async function settled(modelId: string): Promise<TranslationStatusEntry> {
  return expectEventually(
    async () => {
      const map = await kit
        .as(t.viewer)
        .get('/api/viewer/status-map')
        .query({ workspace: t.workspace })
        .expect(200);
      const entry = (map.body as TranslationStatusEntry[]).find((e) => e.modelId === modelId);
      if (!entry || entry.status === 'pending' || entry.status === 'inprogress')
        throw new Error(`not finished: ${JSON.stringify(entry)}`);
      return entry;
    },
    { timeoutMs: 30_000 },
  );
}

const lookup = (filename: string, extra: Record<string, unknown> = {}) =>
  kit
    .as(t.viewer)
    .get('/api/viewer/models/lookup')
    .query({ workspace: t.workspace, filename: `${folder}/${filename}`, ...extra });

/** The GLB behind a signed URL, fetched without credentials. */
async function glbAt(url: string): Promise<Buffer> {
  const { pathname, search } = new URL(url);
  const res = await kit
    .as(t.viewer)
    .get(`${pathname}${search}`)
    .set('Authorization', '')
    .buffer(true)
    .parse(binary)
    .expect(200);
  expect(res.headers['content-type']).toBe('model/gltf-binary');
  return res.body as Buffer;
}

/** Distinct (position, facet normal) pairs of a triangle soup: the vertices a flat-shaded GLB needs. */
function flatVertices(triangles: number[][]): number {
  const seen = new Set<string>();
  for (const tri of triangles) {
    const [a, b, c] = [tri.slice(0, 3), tri.slice(3, 6), tri.slice(6, 9)];
    const u = b.map((x, i) => x - a[i]);
    const v = c.map((x, i) => x - a[i]);
    const n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    const len = Math.hypot(...n);
    const key = n.map((x) => Math.fround(x / len)).join(',');
    for (const p of [a, b, c]) seen.add(`${p.map(Math.fround).join(',')}|${key}`);
  }
  return seen.size;
}

describe('model translation', () => {
  test('an STL and a STEP become GLBs with the right vertex count and bounds; progress comes as SSE', async () => {
    const stream = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.viewer.token);
    const triangles = [...boxTriangles(10, 20, 30), ...boxTriangles(5, 5, 5, [40, 0, 0])];
    await kit.upload(t.engineer, folder, 'bracket.stl', binaryStl(triangles)).expect(201);
    const step = stepBoxes([
      { at: [0, 0, 0], size: [10, 20, 30] },
      { at: [-50, 5, 5], size: [4, 4, 4] },
    ]);
    await kit.upload(t.engineer, folder, 'housing.step', step).expect(201);

    const stl = await translate('bracket.stl').expect(202);
    expect(stl.body).toMatchObject({ name: `${folder}/bracket.stl`, status: 'pending', format: 'stl' });
    const stp = await translate('housing.step').expect(202);
    expect(await settled(stl.body.modelId)).toMatchObject({ status: 'success', progress: 100 });
    expect(await settled(stp.body.modelId)).toMatchObject({ status: 'success', progress: 100 });

    const stlModel = (await lookup('bracket.stl').expect(200)).body as ModelLookup;
    expect(stlModel).toMatchObject({ modelId: stl.body.modelId, status: 'success', triangles: 24 });
    expect(stlModel.url).toMatch(/^https:\/\/collab\.example\.test\/api\/viewer\/models\/[0-9a-f-]+\/glb\?/);
    const stlGlb = await readGlb(await glbAt(stlModel.url as string));
    expect(stlGlb.vertices).toBe(flatVertices(triangles));
    expect(stlGlb.triangles).toBe(24);
    expect(stlGlb.bounds).toEqual({ min: [0, 0, 0], max: [45, 20, 30] });
    expect(stlModel.vertices).toBe(stlGlb.vertices);

    const stepModel = (await lookup('housing.step').expect(200)).body as ModelLookup;
    const stepGlb = await readGlb(await glbAt(stepModel.url as string));
    // OpenCascade meshes each planar face as two triangles with four vertices of its own.
    expect(stepGlb).toEqual({
      meshes: 2,
      vertices: 2 * 6 * 4,
      triangles: 2 * 6 * 2,
      bounds: { min: [-50, 0, 0], max: [10, 20, 30] },
    });

    await stream.waitFor(
      (e) =>
        e.type === 'translation' &&
        (e.data as { modelId: string; status: string }).modelId === stp.body.modelId &&
        (e.data as { status: string }).status === 'success',
    );
    const progress = stream
      .of('translation')
      .filter((e) => (e.data as { modelId: string }).modelId === stp.body.modelId)
      .map((e) => e.data as { status: string; progress: number });
    expect(progress[0]).toMatchObject({ status: 'pending', progress: 0 });
    expect(progress.at(-1)).toMatchObject({ status: 'success', progress: 100 });
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(progress.map((p) => p.status))).toEqual(new Set(['pending', 'inprogress', 'success']));
    stream.close();

    // Simplified and meshopt-compressed on request: another job of the same version.
    const small = await translate('bracket.stl', { simplify: 0.5, compress: true }).expect(202);
    expect(await settled(small.body.modelId)).toMatchObject({ status: 'success' });
    const [row] = await stack.collab.deps.dataSource.query(
      'SELECT glb_key FROM model_translations WHERE id = $1',
      [small.body.modelId],
    );
    const got = await stack.collab.deps.blobs.get(row.glb_key);
    const chunks: Buffer[] = [];
    for await (const chunk of got.body) chunks.push(chunk as Buffer);
    const glb = Buffer.concat(chunks);
    const json = JSON.parse(glb.subarray(20, 20 + glb.readUInt32LE(12)).toString('utf8'));
    expect(json.extensionsRequired).toContain('EXT_meshopt_compression');
  });

  test('a corrupt file ends failed with a reason; asking again answers the same job and runs nothing', async () => {
    await kit
      .upload(t.engineer, folder, 'broken.step', 'ISO-10303-21;\nthis is not STEP at all\n')
      .expect(201);
    const first = await translate('broken.step').expect(202);
    const failed = await settled(first.body.modelId);
    expect(failed.status).toBe('failed');
    expect(failed.reason).toMatch(/OpenCascade cannot read/);
    const again = await translate('broken.step').expect(200);
    expect(again.body).toMatchObject({ modelId: first.body.modelId, status: 'failed' });
    await kit.upload(t.engineer, folder, 'empty.stl', Buffer.alloc(84)).expect(201);
    const empty = await translate('empty.stl').expect(202);
    expect((await settled(empty.body.modelId)).reason).toMatch(/no triangles/);
    const attempts = await stack.collab.deps.dataSource.query(
      'SELECT attempts FROM model_translations WHERE id = ANY($1::uuid[])',
      [[first.body.modelId, empty.body.modelId]],
    );
    expect(attempts).toEqual([{ attempts: 1 }, { attempts: 1 }]);
    const lookedUp = await lookup('broken.step').expect(200);
    expect(lookedUp.body).toMatchObject({ status: 'failed', url: null });
  });

  test('two workers never run the same job, however often it is queued', async () => {
    // A second process on the same database, broker and blob store (as replicas share S3).
    const { config } = stack.collab.deps;
    const replica = await stack.startCollabReplica({
      BLOB_DIR: config.BLOB_DIR ?? join(config.DATA_DIR, stack.collab.deps.service, 'blobs'),
    });
    const triangles = boxTriangles(3, 3, 3);
    await kit.upload(t.engineer, folder, 'twice.stl', binaryStl(triangles)).expect(201);
    const job = await translate('twice.stl').expect(202);
    // The same job queued three more times (a redelivery, a replayed outbox), to both processes.
    for (let i = 0; i < 3; i++) {
      await stack.collab.deps.bus.transaction((manager) =>
        stack.collab.deps.bus.outbox.add(manager, {
          type: RoutingKeys.translationRequested,
          workspace: t.workspace,
          actor: 'test',
          data: { translationId: job.body.modelId },
        }),
      );
    }
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // And straight claims from both processes at once on a fresh job (no message queued): one runs it.
    const raceId = '01a2f000-0000-7000-8000-000000000001';
    await stack.collab.deps.dataSource.query(
      `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, options_key)
       SELECT $2, workspace_id, file_id, version_id, branch, name, format, 'race' FROM model_translations WHERE id = $1`,
      [job.body.modelId, raceId],
    );
    const workers = [stack.collab.deps, replica.deps].map(
      (deps) => collabService.exportsOf<ViewerExports>(deps, 'viewer').worker,
    );
    const ran = await Promise.all([...workers, ...workers].map((w) => w.run(raceId)));
    expect(ran.filter(Boolean)).toHaveLength(1);
    const rows = await stack.collab.deps.dataSource.query(
      'SELECT id, attempts, status FROM model_translations WHERE id = ANY($1::uuid[]) ORDER BY created_at',
      [[job.body.modelId, raceId]],
    );
    expect(rows.map((r: { attempts: number; status: string }) => [r.attempts, r.status])).toEqual([
      [1, 'success'],
      [1, 'success'],
    ]);
    const claims = await stack.collab.deps.dataSource.query(
      `SELECT count(*)::int AS n FROM collab_events WHERE type = 'translation' AND data->>'modelId' = $1 AND data->>'stage' = 'claimed'`,
      [job.body.modelId],
    );
    expect(claims[0].n).toBe(1);
  });

  test('a bare file name (section 4.9) names the caller’s own folder', async () => {
    await kit.upload(t.engineer, folder, 'bare.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const asked = await kit
      .as(t.engineer)
      .post('/api/viewer/translate-file')
      .send({ workspace: t.workspace, filename: 'bare.stl' })
      .expect(202);
    expect(asked.body.name).toBe(`${folder}/bare.stl`);
    expect(await settled(asked.body.modelId)).toMatchObject({ status: 'success' });
    const found = await kit
      .as(t.engineer)
      .get('/api/viewer/models/lookup')
      .query({ workspace: t.workspace, filename: 'bare.stl' })
      .expect(200);
    expect(found.body).toMatchObject({ modelId: asked.body.modelId, status: 'success' });
    // The viewer has no such file in their own folder.
    await kit
      .as(t.viewer)
      .get('/api/viewer/models/lookup')
      .query({ workspace: t.workspace, filename: 'bare.stl' })
      .expect(404);
  });

  test('a job whose worker stopped is run again when asked for; past its attempts it ends failed', async () => {
    await kit.upload(t.engineer, folder, 'killed.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const job = await translate('killed.stl').expect(202);
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // As if its process had been killed mid-translation an hour ago, after one attempt.
    const stall = (attempts: number) =>
      stack.collab.deps.dataSource.query(
        `UPDATE model_translations SET status = 'inprogress', progress = 40, attempts = $2, claimed_by = 'gone',
                claimed_at = now() - interval '1 hour', glb_key = NULL WHERE id = $1`,
        [job.body.modelId, attempts],
      );
    await stall(1);
    const again = await translate('killed.stl').expect(200);
    expect(again.body.modelId).toBe(job.body.modelId);

    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    await stall(2);
    await translate('killed.stl').expect(200);

    const given = await settled(job.body.modelId);
    expect(given).toMatchObject({ status: 'failed' });
    expect(given.reason).toMatch(/did not finish in 2 attempts/);
  });

  test('a job whose process died is taken over once its lease runs out, unasked, well within its time limit', async () => {
    await kit.upload(t.engineer, folder, 'lapsed.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const job = await translate('lapsed.stl').expect(202);
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // As if its process had been killed five seconds into its run (the time limit is 300 s).
    await stack.collab.deps.dataSource.query(
      `UPDATE model_translations SET status = 'inprogress', progress = 40, attempts = 1, claimed_by = 'gone',
              claimed_at = now() - interval '5 seconds', lease_until = now() - interval '1 second',
              glb_key = NULL, finished_at = NULL WHERE id = $1`,
      [job.body.modelId],
    );
    // Nobody asks again: the sweep takes it over and runs it.
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    const [row] = await stack.collab.deps.dataSource.query(
      'SELECT attempts, claimed_by, lease_until FROM model_translations WHERE id = $1',
      [job.body.modelId],
    );
    expect(row.attempts).toBe(2);
    expect(row.claimed_by).not.toBe('gone');
  });

  test('a job whose lease is renewed is not taken over, however long ago it was claimed', async () => {
    await kit.upload(t.engineer, folder, 'leased.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const job = await translate('leased.stl').expect(202);
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // Claimed an hour ago by a process that is still running it: its lease runs another minute.
    await stack.collab.deps.dataSource.query(
      `UPDATE model_translations SET status = 'inprogress', progress = 40, attempts = 1, claimed_by = 'alive',
              claimed_at = now() - interval '1 hour', lease_until = now() + interval '1 minute',
              glb_key = NULL, finished_at = NULL WHERE id = $1`,
      [job.body.modelId],
    );
    const again = await translate('leased.stl').expect(200);
    expect([again.body.modelId, again.body.status]).toEqual([job.body.modelId, 'inprogress']);
    // Several sweeps later (every 500 ms here) it is still the live worker's.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const [row] = await stack.collab.deps.dataSource.query(
      'SELECT status, attempts, claimed_by FROM model_translations WHERE id = $1',
      [job.body.modelId],
    );
    expect(row).toEqual({ status: 'inprogress', attempts: 1, claimed_by: 'alive' });
    await stack.collab.deps.dataSource.query(
      `UPDATE model_translations SET status = 'failed', reason = 'test over' WHERE id = $1`,
      [job.body.modelId],
    );
  });

  test('translations are bounded per version (8 option sets, 409) and per user (4 waiting, 429)', async () => {
    await kit.upload(t.engineer, folder, 'variants.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const first = await translate('variants.stl', { simplify: 0.5 }).expect(202);
    // Seven more option sets of that version exist (rows as finished jobs would leave them).
    await stack.collab.deps.dataSource.query(
      `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, options_key, status, requested_by)
       SELECT gen_random_uuid(), workspace_id, file_id, version_id, branch, name, format, 'v' || n, 'failed', requested_by
         FROM model_translations, generate_series(1, 7) AS n WHERE id = $1`,
      [first.body.modelId],
    );
    const ninth = await translate('variants.stl', { simplify: 0.25 });
    expect([ninth.status, ninth.body.code]).toEqual([409, 'conflict']);
    // Asking again for an existing option set is never refused.
    expect((await translate('variants.stl', { simplify: 0.5 })).status).toBe(200);

    // Four jobs of the viewer waiting: the fifth is 429 with Retry-After.
    await kit.upload(t.engineer, folder, 'queue.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const queued = await translate('queue.stl', { simplify: 0.9 }).expect(202);
    const viewerId = t.viewer.user.id;
    await stack.collab.deps.dataSource.query(
      `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, options_key, status, requested_by, updated_at)
       SELECT gen_random_uuid(), workspace_id, file_id, version_id, branch, name, format, 'q' || n, 'pending', $2, now()
         FROM model_translations, generate_series(1, 4) AS n WHERE id = $1`,
      [queued.body.modelId, viewerId],
    );
    const fifth = await translate('queue.stl', { simplify: 0.8 });
    expect([fifth.status, fifth.body.code, fifth.headers['retry-after']]).toEqual([
      429,
      'rate_limited',
      '30',
    ]);
    await stack.collab.deps.dataSource.query(
      `DELETE FROM model_translations WHERE version_id = (SELECT version_id FROM model_translations WHERE id = $1)
         AND options_key LIKE 'q%'`,
      [queued.body.modelId],
    );
  });

  test('a new version invalidates the translation; branches translate under their branch name', async () => {
    await kit.upload(t.engineer, folder, 'link.stl', binaryStl(boxTriangles(1, 1, 1))).expect(201);
    const v1 = await translate('link.stl').expect(202);
    await settled(v1.body.modelId);
    const oldUrl = ((await lookup('link.stl').expect(200)).body as ModelLookup).url as string;
    const meta = await kit
      .as(t.engineer)
      .get('/v1/filemeta')
      .query({ workspace: t.workspace, username: folder, filename: 'link.stl' })
      .expect(200);
    await kit
      .upload(t.engineer, folder, 'link.stl', binaryStl(boxTriangles(2, 2, 2)), {
        baseVersion: meta.body.etag,
      })
      .expect(201);
    const stale = await lookup('link.stl').expect(404);
    expect(stale.body.code).toBe('not_found');
    const map = await kit
      .as(t.viewer)
      .get('/api/viewer/status-map')
      .query({ workspace: t.workspace })
      .expect(200);
    expect((map.body as TranslationStatusEntry[]).some((e) => e.name === `${folder}/link.stl`)).toBe(false);
    const v2 = await translate('link.stl').expect(202);
    expect(v2.body.modelId).not.toBe(v1.body.modelId);
    await settled(v2.body.modelId);
    expect(((await lookup('link.stl').expect(200)).body as ModelLookup).bounds).toEqual({
      min: [0, 0, 0],
      max: [2, 2, 2],
    });
    // The old GLB is gone with its translation.
    const { pathname, search } = new URL(oldUrl);
    await kit.as(t.viewer).get(`${pathname}${search}`).expect(404);

    await kit
      .as(t.engineer)
      .post('/v1/branches/create')
      .send({ workspace: t.workspace, username: folder, base: 'link.stl', branch: 'longer' })
      .expect(201);
    const branch = await translate('link.stl', { branch: 'longer' }).expect(202);
    expect(branch.body.name).toBe(`${folder}/link@longer.stl`);
    await settled(branch.body.modelId);
    await lookup('link.stl', { branch: 'longer' }).expect(200);
  });

  test('bad input: unsupported format 415, unknown file 404, foreign workspace 404, bad signature 403, bad name 400', async () => {
    await kit.upload(t.engineer, folder, 'notes.txt', 'hello').expect(201);
    expect((await translate('notes.txt').expect(415)).body.code).toBe('unsupported_media_type');
    await translate('missing.stl').expect(404);
    await kit
      .as(t.viewer)
      .post('/api/viewer/translate-file')
      .send({ workspace: t.workspace, filename: 'a/b/c.stl' })
      .expect(400);
    // A bare name is the caller's own folder, where the viewer has no such file.
    await kit
      .as(t.viewer)
      .post('/api/viewer/translate-file')
      .send({ workspace: t.workspace, filename: 'no-slash.stl' })
      .expect(404);
    await kit
      .as(t.viewer)
      .post('/api/viewer/translate-file')
      .send({ workspace: t.workspace, filename: `${folder}/x.stl`, simplify: 5 })
      .expect(400);
    const other = await teamWorkspace(stack, 'viewer-other');
    await kit
      .as(other.owner)
      .get('/api/viewer/models/lookup')
      .query({ workspace: t.workspace, filename: `${folder}/bracket.stl` })
      .expect(404);
    const model = (await lookup('bracket.stl').expect(200)).body as ModelLookup;
    const url = new URL(model.url as string);
    url.searchParams.set('sig', `${url.searchParams.get('sig')?.slice(0, -2)}AA`);
    await kit.as(t.viewer).get(`${url.pathname}${url.search}`).expect(403);
    const past = new URL(model.url as string);
    await kit
      .as(t.viewer)
      .get(`/api/viewer/models/${model.modelId}/glb${past.search.replace(/expires=\d+/, 'expires=1')}`)
      .expect(403);
    const ranged = await kit
      .as(t.viewer)
      .get(`${new URL(model.url as string).pathname}${new URL(model.url as string).search}`)
      .set('Range', 'bytes=0-3')
      .buffer(true)
      .parse(binary)
      .expect(206);
    expect((ranged.body as Buffer).toString('latin1')).toBe('glTF');
    expect((model as Translation).size).toBeGreaterThan(0);
  });
});
