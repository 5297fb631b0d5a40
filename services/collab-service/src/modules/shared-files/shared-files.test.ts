import { createHash } from 'node:crypto';
import type { SharedFile, UploadResult } from '@hwp/contracts';
import { newClientIp, uniqueEmail } from '@hwp/platform/test-kit';
import request from 'supertest';
import {
  addMembers,
  type CrossHostStack,
  collabMember,
  startCrossHostStack,
  type Team,
  teamWorkspace,
} from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';

let stack: CrossHostStack;
beforeAll(async () => {
  stack = await startCrossHostStack();
}, 60_000);
afterAll(() => stack?.stop());

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('uploads with optimistic concurrency', () => {
  // A workspace per test: uploads are limited to 30 a minute per workspace and address.
  let t: Team;
  let kit: ReturnType<typeof filesKit>;
  let me: string;
  beforeEach(async () => {
    t = await teamWorkspace(stack, 'sf');
    kit = filesKit(stack, t);
    me = await kit.username(t.engineer);
  });

  test('a new file, a new version on the etag, and 409 with a conflict copy on a stale one', async () => {
    const first = await kit.upload(t.engineer, me, 'notes.txt', 'one').expect(201);
    expect(first.body).toMatchObject({
      filename: 'notes.txt',
      etag: sha('one'),
      sha256: sha('one'),
      size: 3,
      branch: null,
    });
    const second = await kit
      .upload(t.engineer, me, 'notes.txt', 'two', { baseVersion: sha('one') })
      .expect(201);
    expect(second.body.etag).toBe(sha('two'));
    const stale = await kit
      .upload(t.engineer, me, 'notes.txt', 'three', { baseVersion: sha('one') })
      .expect(409);
    expect(stale.body).toMatchObject({ code: 'version_conflict', currentEtag: sha('two') });
    expect(stale.body.conflict.filename).toMatch(/^notes_conflict_[\w.-]+_\d{8}T\d{6}\.txt$/);
    expect((await kit.bytes(t.viewer, me, stale.body.conflict.filename)).toString()).toBe('three');
    // No baseVersion onto an existing file is a conflict too; replace=true is not; the same bytes are no conflict.
    await kit.upload(t.engineer, me, 'notes.txt', 'four').expect(409);
    await kit.upload(t.engineer, me, 'notes.txt', 'two').expect(201);
    const replaced = await kit.upload(t.engineer, me, 'notes.txt', 'five', { replace: 'true' }).expect(201);
    expect(replaced.body.etag).toBe(sha('five'));
    const meta = await kit
      .as(t.viewer)
      .get('/v1/filemeta')
      .query({ workspace: t.workspace, username: me, filename: 'notes.txt' })
      .expect(200);
    expect(meta.body).toMatchObject({
      etag: sha('five'),
      size: 4,
      lock: null,
      path: kit.path(me, 'notes.txt'),
    });
    const versions = await kit
      .as(t.viewer)
      .get('/v1/versions')
      .query({ path: kit.path(me, 'notes.txt') })
      .expect(200);
    expect(versions.body.items.map((v: { etag: string }) => v.etag)).toEqual([
      sha('five'),
      sha('two'),
      sha('one'),
    ]);
    const conflicts = await kit
      .as(t.viewer)
      .get('/v1/conflicts')
      .query({ workspace: t.workspace, username: me })
      .expect(200);
    expect(conflicts.body.items).toHaveLength(2);
  });

  test('ten clients with the same baseVersion at once: one new version, nine conflict copies, every byte kept', async () => {
    const base = await kit.upload(t.engineer, me, 'race.txt', 'base').expect(201);
    const bodies = Array.from({ length: 10 }, (_, i) => `racer ${i} `.repeat(1000 + i));
    const answers = await Promise.all(
      bodies.map((body) => kit.upload(t.engineer, me, 'race.txt', body, { baseVersion: base.body.etag })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const winner = answers.find((a) => a.status === 201)?.body as UploadResult;
    const copies = answers.filter((a) => a.status === 409).map((a) => a.body.conflict.filename as string);
    expect(new Set(copies).size).toBe(9);
    const served = [
      await kit.bytes(t.viewer, me, 'race.txt'),
      ...(await Promise.all(copies.map((c) => kit.bytes(t.viewer, me, c)))),
    ];
    expect(served.map((b) => b.toString()).sort()).toEqual([...bodies].sort());
    expect(sha(served[0])).toBe(winner.etag);
    const versions = await kit
      .as(t.viewer)
      .get('/v1/versions')
      .query({ path: kit.path(me, 'race.txt') })
      .expect(200);
    expect(versions.body.items).toHaveLength(2);
  });

  test('ten first uploads of one new path at once: one creates it, nine conflict copies, every byte kept', async () => {
    const bodies = Array.from({ length: 10 }, (_, i) => `first ${i} `.repeat(500 + i));
    const answers = await Promise.all(bodies.map((body) => kit.upload(t.engineer, me, 'new-race.txt', body)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const conflicts = answers.filter((a) => a.status === 409);
    expect(conflicts.map((a) => a.body.code)).toEqual(Array(9).fill('version_conflict'));
    const copies = conflicts.map((a) => a.body.conflict.filename as string);
    const served = [
      await kit.bytes(t.viewer, me, 'new-race.txt'),
      ...(await Promise.all(copies.map((c) => kit.bytes(t.viewer, me, c)))),
    ];
    expect(served.map((b) => b.toString()).sort()).toEqual([...bodies].sort());
  });

  test('a user writes their own folder only; managers write any; viewers none', async () => {
    const other = await kit.username(t.viewer);
    await kit.upload(t.engineer, other, 'x.txt', 'x').expect(403);
    await kit.upload(t.manager, other, 'x.txt', 'x').expect(201);
    await kit.upload(t.viewer, other, 'y.txt', 'y').expect(403);
    const all = await kit.as(t.viewer).get('/v1/files/all').query({ workspace: t.workspace }).expect(200);
    expect((all.body.items as SharedFile[]).some((f) => f.username === other && f.filename === 'x.txt')).toBe(
      true,
    );
  });

  test('a folder belongs to its account: a name its files are under is never given up or taken over', async () => {
    const [owner, newcomer, fresh] = await Promise.all([
      collabMember(stack),
      collabMember(stack),
      collabMember(stack),
    ]);
    await addMembers(stack, t.id, [
      [owner, 'engineer'],
      [newcomer, 'engineer'],
      [fresh, 'engineer'],
    ]);
    const name = await kit.username(owner);
    await kit.upload(owner, name, 'design.step', 'mine').expect(201);
    const init = (user: typeof owner, username: string) =>
      kit.as(user).post('/v1/users/init').send({ username }).expect(200);
    // The owner keeps the name their files are under.
    expect((await init(owner, `${name}-renamed`)).body.user.username).toBe(name);
    // A name freed before this rule (renamed in the database) is not taken by somebody else.
    await stack.collab.deps.dataSource.query('UPDATE collab_users SET username = $1 WHERE id = $2', [
      `${name}-moved`,
      owner.user.id,
    ]);
    const mine = await kit.username(newcomer);
    expect((await init(newcomer, name)).body.user.username).toBe(mine);
    await kit.upload(newcomer, name, 'design.step', 'theirs now').expect(403);
    await kit
      .as(newcomer)
      .delete('/v1/file')
      .query({ workspace: t.workspace, username: name, filename: 'design.step' })
      .expect(403);
    // A user without files may pick a free name.
    expect((await init(fresh, `${name}-fresh`)).body.user.username).toBe(`${name}-fresh`);
  });

  test('a new account is never named after a folder that holds files', async () => {
    // A manager files a document under a name nobody holds yet...
    const email = uniqueEmail('handover');
    const name = email.split('@')[0];
    await kit.upload(t.manager, name, 'handover.pdf', 'the manager filed it').expect(201);
    // ...then somebody signs up with the address that name comes from: they get another name.
    const ip = newClientIp();
    const signup = await request(stack.api.app)
      .post('/auth/signup')
      .set('X-Forwarded-For', ip)
      .send({ email, password: 'correct horse battery' })
      .expect(200);
    const newcomer = {
      ...signup.body,
      email,
      password: 'correct horse battery',
      ip,
      token: signup.body.session.access_token,
    };
    const init = await kit.as(newcomer).post('/v1/users/init').send({}).expect(200);
    expect(init.body.user.username).toBe(`${name}-2`);
    await addMembers(stack, t.id, [[newcomer, 'engineer']]);
    await kit.upload(newcomer, name, 'handover.pdf', 'mine now').expect(403);
    await kit
      .as(newcomer)
      .delete('/v1/file')
      .query({ workspace: t.workspace, username: name, filename: 'handover.pdf' })
      .expect(403);
  });

  test('a multipart body without a boundary is 400 on every upload and import route', async () => {
    const routes = [
      `/v1/upload?workspace=${t.workspace}&username=${me}`,
      `/v1/uploads?workspace=${t.workspace}&username=${me}`,
      `/v1/parts/import?workspace=${t.workspace}`,
      `/v1/boms/import?workspace=${t.workspace}`,
    ];
    for (const path of routes) {
      const res = await kit.as(t.engineer).post(path).set('Content-Type', 'multipart/form-data').send('x=1');
      expect([path, res.status, res.body.code]).toEqual([path, 400, 'validation_failed']);
    }
  });

  test('file names with .., /, NUL, control characters or over 255 bytes are 400', async () => {
    for (const name of [
      '../x.txt',
      'a/b.txt',
      'a\\b.txt',
      'nul\u0000.txt',
      'bell\u0007.txt',
      'new\nline.txt',
      `${'é'.repeat(128)}.txt`,
      '..',
    ]) {
      const res = await kit.rawUpload(t.engineer, me, name, 'x');
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
    }
    await kit
      .as(t.viewer)
      .get('/v1/filemeta')
      .query({ workspace: t.workspace, username: me, filename: '../etc' })
      .expect(400);
    const unicode = await kit.upload(t.engineer, me, 'Ünïcode spec §1.txt', 'ok').expect(201);
    expect(unicode.body.filename).toBe('Ünïcode spec §1.txt');
  });

  test('delete to the trash and restore give back the same bytes and versions; a taken name is 409', async () => {
    await kit.upload(t.engineer, me, 'keep.txt', 'v1').expect(201);
    await kit.upload(t.engineer, me, 'keep.txt', 'v2', { baseVersion: sha('v1') }).expect(201);
    const q = { workspace: t.workspace, username: me, filename: 'keep.txt' };
    const gone = await kit.as(t.engineer).delete('/v1/file').query(q).expect(200);
    await kit.as(t.viewer).get('/v1/filemeta').query(q).expect(404);
    const trash = await kit
      .as(t.viewer)
      .get('/v1/trash')
      .query({ workspace: t.workspace, username: me })
      .expect(200);
    expect(trash.body.items).toEqual([
      expect.objectContaining({ key: gone.body.key, filename: 'keep.txt', size: 2 }),
    ]);
    await kit.upload(t.engineer, me, 'keep.txt', 'someone else').expect(201);
    const body = { workspace: t.workspace, username: me, key: gone.body.key };
    await kit.as(t.engineer).post('/v1/trash/restore').send(body).expect(409);
    const restored = await kit
      .as(t.engineer)
      .post('/v1/trash/restore')
      .send({ ...body, filename: 'keep (restored).txt' })
      .expect(200);
    expect(restored.body).toMatchObject({ filename: 'keep (restored).txt', etag: sha('v2') });
    expect((await kit.bytes(t.viewer, me, 'keep (restored).txt')).toString()).toBe('v2');
    const versions = await kit
      .as(t.viewer)
      .get('/v1/versions')
      .query({ path: kit.path(me, 'keep (restored).txt') })
      .expect(200);
    expect(versions.body.items.map((v: { etag: string }) => v.etag)).toEqual([sha('v2'), sha('v1')]);
  });

  test('the 31st upload in a minute to one workspace from one address is 429', async () => {
    for (let i = 0; i < 30; i++) await kit.upload(t.engineer, me, `n${i}.txt`, `${i}`).expect(201);
    const limited = await kit.upload(t.engineer, me, 'n30.txt', 'x').expect(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });

  test('text preview for text, 415 for binary; batch uploads answer per file', async () => {
    await kit.upload(t.engineer, me, 'readme.md', '# hello').expect(201);
    const preview = await kit
      .as(t.viewer)
      .get('/v1/file')
      .query({ workspace: t.workspace, username: me, filename: 'readme.md' })
      .expect(200);
    expect(preview.body.text).toBe('# hello');
    await kit.upload(t.engineer, me, 'blob.bin', Buffer.from([0, 1, 2, 255])).expect(201);
    await kit
      .as(t.viewer)
      .get('/v1/file')
      .query({ workspace: t.workspace, username: me, filename: 'blob.bin' })
      .expect(415);
    const batch = await kit
      .as(t.engineer)
      .post('/v1/uploads')
      .query({ workspace: t.workspace, username: me })
      .attach('files', Buffer.from('a'), 'batch-a.txt')
      .attach('files', Buffer.from('b'), 'readme.md')
      .expect(200);
    expect(batch.body.items.map((i: { filename: string; status: number }) => [i.filename, i.status])).toEqual(
      [
        ['batch-a.txt', 201],
        ['readme.md', 409],
      ],
    );
  });
});
