import { createHash } from 'node:crypto';
import { binary, expectEventually } from '@hwp/platform/test-kit';
import request from 'supertest';
import { collabAs, type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    // Signed URLs start with PUBLIC_COLLAB_URL, whatever address the request came to (issue 35).
    collab: { CORS_ORIGINS: 'https://viewer.example', PUBLIC_COLLAB_URL: 'https://collab.example.test' },
  });
}, 60_000);
afterAll(() => stack?.stop());

const CONTENT = Buffer.from(
  Array.from({ length: 100 }, (_, i) => String.fromCharCode(65 + (i % 26))).join(''),
);

describe('serving with Range', () => {
  let t: Team;
  let kit: ReturnType<typeof filesKit>;
  let url: string;
  let etag: string;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'serve');
    kit = filesKit(stack, t);
    const me = await kit.username(t.engineer);
    const up = await kit.upload(t.engineer, me, 'model.glb', CONTENT).expect(201);
    etag = `"${up.body.etag}"`;
    url = `/v1/serve/${t.workspace}/${me}/model.glb`;
  });
  const get = (headers: Record<string, string> = {}) =>
    kit.as(t.viewer).get(url).set(headers).buffer(true).parse(binary);

  test('whole, first bytes, suffix, open-ended; several ranges get the whole body', async () => {
    const whole = await get().expect(200);
    expect(whole.body).toEqual(CONTENT);
    expect(whole.headers).toMatchObject({ 'accept-ranges': 'bytes', etag, 'content-length': '100' });
    expect(whole.headers['last-modified']).toBeDefined();
    const first = await get({ Range: 'bytes=0-9' }).expect(206);
    expect(first.headers['content-range']).toBe('bytes 0-9/100');
    expect(first.body).toEqual(CONTENT.subarray(0, 10));
    const suffix = await get({ Range: 'bytes=-5' }).expect(206);
    expect(suffix.headers['content-range']).toBe('bytes 95-99/100');
    expect(suffix.body).toEqual(CONTENT.subarray(95));
    const open = await get({ Range: 'bytes=90-' }).expect(206);
    expect(open.body).toEqual(CONTENT.subarray(90));
    const several = await get({ Range: 'bytes=0-1,5-6' }).expect(200);
    expect(several.body).toEqual(CONTENT);
    const malformed = await get({ Range: 'pages=1-2' }).expect(200);
    expect(malformed.body).toEqual(CONTENT);
  });

  test('unsatisfiable 416, If-Range, If-None-Match, HEAD with a range', async () => {
    const beyond = await kit.as(t.viewer).get(url).set('Range', 'bytes=100-').expect(416);
    expect(beyond.headers['content-range']).toBe('bytes */100');
    const stale = await get({ Range: 'bytes=0-9', 'If-Range': '"0000"' }).expect(200);
    expect(stale.body).toEqual(CONTENT);
    await get({ Range: 'bytes=0-9', 'If-Range': etag }).expect(206);
    await get({ 'If-None-Match': etag }).expect(304);
    const head = await kit.as(t.viewer).head(url).set('Range', 'bytes=10-19').expect(206);
    expect(head.headers).toMatchObject({ 'content-range': 'bytes 10-19/100', 'content-length': '10', etag });
    expect(head.text ?? '').toBe('');
  });

  test('CORS for CORS_ORIGINS exposes Content-Range, Accept-Ranges and ETag', async () => {
    const res = await get({ Origin: 'https://viewer.example', Range: 'bytes=0-0' }).expect(206);
    expect(res.headers['access-control-allow-origin']).toBe('https://viewer.example');
    expect(res.headers['access-control-expose-headers']).toEqual(expect.stringContaining('Content-Range'));
    expect(res.headers['access-control-expose-headers']).toEqual(expect.stringContaining('ETag'));
    const other = await get({ Origin: 'https://evil.example' }).expect(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // A refusal too: the browser lets the page read the 401 instead of reporting a CORS failure.
    const anonymous = await request(stack.collab.app)
      .get(url)
      .set('Origin', 'https://viewer.example')
      .expect(401);
    expect(anonymous.headers['access-control-allow-origin']).toBe('https://viewer.example');
  });

  test('the CORS preflight of a serving URL is answered for CORS_ORIGINS only', async () => {
    const preflight = (origin: string) =>
      request(stack.collab.app)
        .options(url)
        .set('Origin', origin)
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'authorization, range, if-range');
    const ok = await preflight('https://viewer.example').expect(204);
    expect(ok.headers['access-control-allow-origin']).toBe('https://viewer.example');
    expect(ok.headers['access-control-allow-methods']).toBe('GET,HEAD');
    expect(ok.headers['access-control-allow-headers']).toBe('Range,If-Range,If-None-Match,Authorization');
    expect(ok.headers['access-control-max-age']).toBe('600');
    const refused = await preflight('https://evil.example');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('a signed URL serves without credentials until it expires; a changed character is 403', async () => {
    const signed = await kit.as(t.viewer).get('/signed-url').query({ path: url, ttlMs: 1500 }).expect(200);
    const link = new URL(signed.body.url);
    expect(link.origin).toBe('https://collab.example.test');
    expect(link.pathname).toBe(url.replace('/v1/serve/', '/v1/serve-signed/'));
    const open = (pathAndQuery: string) => request(stack.collab.app).get(pathAndQuery);
    const ok = await open(`${link.pathname}${link.search}`)
      .set('Range', 'bytes=0-4')
      .buffer(true)
      .parse(binary)
      .expect(206);
    expect(ok.body).toEqual(CONTENT.subarray(0, 5));
    const sig = link.searchParams.get('sig') as string;
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    await open(`${link.pathname}${link.search.replace(sig, flipped)}`).expect(403);
    await open(`${link.pathname.replace('model.glb', 'model.glc')}${link.search}`).expect(403);
    await open(
      `${link.pathname}${link.search.replace(/expires=(\d+)/, (_, n) => `expires=${Number(n) + 1}`)}`,
    ).expect(403);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const expired = await open(`${link.pathname}${link.search}`).expect(410);
    expect(expired.body.code).toBe('gone');
    await kit.as(t.viewer).get('/signed-url').query({ path: '/v1/files' }).expect(400);
    await kit
      .as(t.viewer)
      .get('/signed-url')
      .query({ path: url, ttlMs: 8 * 24 * 3600 * 1000 })
      .expect(400);
  });

  test('the etag is the sha256 of the content', async () => {
    const res = await get().expect(200);
    expect(
      `"${createHash('sha256')
        .update(res.body as Buffer)
        .digest('hex')}"`,
    ).toBe(etag);
  });
});

describe('serving follows every change', () => {
  test('a new version, a delete and a restore show in the very next read, on this process and on a replica', async () => {
    const t = await teamWorkspace(stack, 'serve-fresh');
    const kit = filesKit(stack, t);
    const me = await kit.username(t.engineer);
    const first = await kit.upload(t.engineer, me, 'part.step', 'version one').expect(201);
    const path = `/v1/serve/${t.workspace}/${me}/part.step`;
    // A replica on the same database, bus and blob folder; its reads keep the head they found.
    const replica = await stack.startCollabReplica({ DATA_DIR: stack.collab.deps.config.DATA_DIR });
    const readHere = () => kit.as(t.viewer).get(path).buffer(true).parse(binary);
    const readThere = () => collabAs(replica.app, t.viewer).get(path).buffer(true).parse(binary);
    for (const read of [readHere, readThere]) {
      const res = await read().expect(200);
      expect(res.body.toString()).toBe('version one');
      expect((await read().expect(206).set('Range', 'bytes=0-6')).body.toString()).toBe('version');
    }

    await kit
      .upload(t.engineer, me, 'part.step', 'version two', { baseVersion: first.body.etag })
      .expect(201);
    expect((await readHere().expect(200)).body.toString()).toBe('version two');
    // Sooner than the 5 s a kept head lives at most: the change's event made the replica forget it.
    await expectEventually(
      async () => expect((await readThere().expect(200)).body.toString()).toBe('version two'),
      { timeoutMs: 3_000 },
    );

    const q = { workspace: t.workspace, username: me, filename: 'part.step' };
    const gone = await kit.as(t.engineer).delete('/v1/file').query(q).expect(200);
    await kit.as(t.viewer).get(path).expect(404);
    await expectEventually(() => collabAs(replica.app, t.viewer).get(path).expect(404), { timeoutMs: 3_000 });

    await kit
      .as(t.engineer)
      .post('/v1/trash/restore')
      .send({ workspace: t.workspace, username: me, key: gone.body.key })
      .expect(200);
    expect((await readHere().expect(200)).body.toString()).toBe('version two');
    // Sooner than the 5 s a kept head lives at most: the change's event made the replica forget it.
    await expectEventually(
      async () => expect((await readThere().expect(200)).body.toString()).toBe('version two'),
      { timeoutMs: 3_000 },
    );
  });
});
