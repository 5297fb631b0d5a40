import type { ModelLookup, Translation, TranslationStatusEntry } from '@hwp/contracts';
import { readGlb, stepBoxes } from '@hwp/geometry';
import { binaryStl, boxTriangles } from '@hwp/geometry/test-kit';
import { binary, type listen } from '@hwp/platform/test-kit';
import { type Stack, type Team, teamWorkspace } from '#test/collab-test-kit';
import type { filesKit } from '#test/shared-files-kit';
import { SseClient } from '#test/sse-client';
import { viewerTestKit } from '#test/viewer-kit';

/** Translating models, looking them up and serving their GLBs (the jobs' claims and leases: viewer-jobs.test.ts). */
let stack: Stack;
let server: Awaited<ReturnType<typeof listen>>;
let t: Team;
let kit: ReturnType<typeof filesKit>;
let folder: string;
const viewer = viewerTestKit('viewer');
const { translate, settled, lookup } = viewer;
beforeAll(() => {
  ({ stack, server, t, kit, folder } = viewer);
});

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
