import { createHash } from 'node:crypto';
import type { FileBranch } from '@hwp/contracts';
import { type Stack, startStack, teamWorkspace } from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each([
  ['suffix writes (BRANCH_SUFFIX_WRITES=true)', 'true'],
  ['branch column writes (BRANCH_SUFFIX_WRITES=false)', 'false'],
])('branches with %s', (_mode, suffix) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ collab: { BRANCH_SUFFIX_WRITES: suffix } });
  }, 60_000);
  afterAll(() => stack?.stop());

  test('create, write, merge into main; a merge after main moved is 409 unless forced; main stays', async () => {
    const t = await teamWorkspace(stack, 'br');
    const kit = filesKit(stack, t);
    const me = await kit.username(t.engineer);
    const folder = { workspace: t.workspace, username: me };
    await kit.upload(t.engineer, me, 'bracket.step', 'main v1').expect(201);
    const created = await kit
      .as(t.engineer)
      .post('/v1/branches/create')
      .send({ ...folder, base: 'bracket.step', branch: 'light' })
      .expect(201);
    const branch = created.body as FileBranch;
    expect(branch).toMatchObject({
      name: 'light',
      base: 'bracket.step',
      filename: suffix === 'true' ? 'bracket@light.step' : 'bracket.step',
    });
    await kit
      .as(t.engineer)
      .post('/v1/branches/create')
      .send({ ...folder, base: 'bracket.step', branch: 'light' })
      .expect(409);
    await kit
      .as(t.engineer)
      .post('/v1/branches/create')
      .send({ ...folder, base: 'bracket.step', branch: 'Bad Name' })
      .expect(400);

    // A write on the branch, in the mode's way.
    const writeBranch = (content: string, base: string) =>
      suffix === 'true'
        ? kit.upload(t.engineer, me, 'bracket@light.step', content, { baseVersion: base })
        : kit.upload(t.engineer, me, 'bracket.step', content, { baseVersion: base, branch: 'light' });
    const written = await writeBranch('light v1', sha('main v1')).expect(201);
    expect(written.body.etag).toBe(sha('light v1'));
    // main did not change.
    expect((await kit.bytes(t.viewer, me, 'bracket.step')).toString()).toBe('main v1');

    const merged = await kit
      .as(t.engineer)
      .post('/v1/merge')
      .send({ ...folder, filename: 'bracket.step', fromBranch: 'light', message: 'lighter' })
      .expect(200);
    expect(merged.body).toMatchObject({ etag: sha('light v1'), branch: null });
    expect((await kit.bytes(t.viewer, me, 'bracket.step')).toString()).toBe('light v1');
    const versions = await kit
      .as(t.viewer)
      .get('/v1/versions')
      .query({ path: kit.path(me, 'bracket.step') })
      .expect(200);
    expect(versions.body.items[0]).toMatchObject({ source: 'merge', message: 'lighter', branch: 'main' });

    // main moves on; the branch moves on; merging again is a conflict unless forced.
    await kit.upload(t.engineer, me, 'bracket.step', 'main v2', { baseVersion: sha('light v1') }).expect(201);
    await writeBranch('light v2', sha('light v1')).expect(201);
    const refused = await kit
      .as(t.engineer)
      .post('/v1/merge')
      .send({ ...folder, filename: 'bracket.step', fromBranch: 'light' })
      .expect(409);
    expect(refused.body.detail).toContain('moved');
    expect((await kit.bytes(t.viewer, me, 'bracket.step')).toString()).toBe('main v2');
    await kit
      .as(t.engineer)
      .post('/v1/merge')
      .send({ ...folder, filename: 'bracket.step', fromBranch: 'light', force: true })
      .expect(200);
    expect((await kit.bytes(t.viewer, me, 'bracket.step')).toString()).toBe('light v2');

    const list = await kit
      .as(t.viewer)
      .get('/v1/branches')
      .query({ ...folder, base: 'bracket.step' })
      .expect(200);
    expect(list.body.items.map((b: FileBranch) => b.name)).toEqual(['main', 'light']);
    // Section 2.11's Branch record: workspace, username, base, branch.
    expect(list.body.items.map((b: FileBranch) => [b.workspace, b.username, b.base, b.branch])).toEqual([
      [t.workspace, me, 'bracket.step', 'main'],
      [t.workspace, me, 'bracket.step', 'light'],
    ]);
    await kit
      .as(t.engineer)
      .post('/v1/branches/delete')
      .send({ ...folder, base: 'bracket.step', branch: 'main' })
      .expect(400);
    const left = await kit
      .as(t.engineer)
      .post('/v1/branches/delete')
      .send({ ...folder, base: 'bracket.step', branch: 'light' })
      .expect(200);
    expect(left.body.items.map((b: FileBranch) => b.name)).toEqual(['main']);
    await kit
      .as(t.engineer)
      .post('/v1/merge')
      .send({ ...folder, filename: 'bracket.step', fromBranch: 'light' })
      .expect(404);
  });
});

describe('conflicts', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  }, 60_000);
  afterAll(() => stack?.stop());

  test('resolve accepts one version for everyone and removes the conflict copies', async () => {
    const t = await teamWorkspace(stack, 'cf');
    const kit = filesKit(stack, t);
    const me = await kit.username(t.engineer);
    await kit.upload(t.engineer, me, 'plan.txt', 'a').expect(201);
    await kit.upload(t.engineer, me, 'plan.txt', 'b', { baseVersion: sha('a') }).expect(201);
    const lost = await kit.upload(t.engineer, me, 'plan.txt', 'c', { baseVersion: sha('a') }).expect(409);
    await kit.upload(t.engineer, me, 'plan.txt', 'd', { baseVersion: sha('a') }).expect(409);
    const open = await kit
      .as(t.viewer)
      .get('/v1/conflicts')
      .query({ workspace: t.workspace, username: me })
      .expect(200);
    expect(open.body.items).toHaveLength(2);
    const resolved = await kit
      .as(t.engineer)
      .post('/v1/conflicts/resolve')
      .send({
        baseName: kit.path(me, 'plan.txt'),
        acceptedPath: kit.path(me, lost.body.conflict.filename),
      })
      .expect(200);
    expect(resolved.body).toMatchObject({ etag: sha('c'), removed: 2 });
    expect((await kit.bytes(t.viewer, me, 'plan.txt')).toString()).toBe('c');
    expect(
      (
        await kit
          .as(t.viewer)
          .get('/v1/conflicts')
          .query({ workspace: t.workspace, username: me })
          .expect(200)
      ).body.items,
    ).toEqual([]);
    const files = await kit
      .as(t.viewer)
      .get('/v1/files')
      .query({ workspace: t.workspace, username: me })
      .expect(200);
    expect(files.body.items.map((f: { filename: string }) => f.filename)).toEqual(['plan.txt']);
    const timeline = await kit
      .as(t.viewer)
      .get('/v1/timeline')
      .query({ path: kit.path(me, 'plan.txt'), types: 'version' })
      .expect(200);
    expect(timeline.body.items[0]).toMatchObject({ type: 'version' });
  });
});
