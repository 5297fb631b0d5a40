import { createHash } from 'node:crypto';
import type { FileRecord, FileRevisionList } from '@hwp/contracts';
import { binaryStlBox } from '@hwp/geometry/test-kit';
import request from 'supertest';
import { as, signUp } from '#test/api-test-kit';
import { joinTenant, team, upload } from '#test/factories';
import { binary, bytes, inTenant, settled, startFilesApi } from '#test/files-test-setup';
import { expectTenantIsolation } from '#test/tenant-isolation';

let stack: Awaited<ReturnType<typeof startFilesApi>>;
beforeAll(async () => {
  stack = await startFilesApi();
}, 60_000);
afterAll(() => stack?.stop());

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('upload and download', () => {
  test('an upload is stored on S3 and comes back whole, ranged, and as an attachment that cannot run', async () => {
    const user = await signUp(stack.api.app);
    const content = bytes(300_000);
    const file = await upload(as(stack.api.app, user), 'bracket.stl', content, {
      folder_path: '/chassis//brackets/',
      description: 'Left bracket',
      tags: 'mech,rev-a',
      product_id: 'P-100',
    });
    expect(file).toMatchObject({
      name: 'bracket.stl',
      size: content.length,
      type: 'stl',
      mime_type: 'model/stl',
      path: '/chassis/brackets/bracket.stl',
      folder_path: '/chassis/brackets',
      url: `/files/${file.id}/download`,
      preview_url: `/files/${file.id}/preview`,
      thumbnail_url: `/files/${file.id}/thumbnail`,
      revision_count: 1,
      tags: ['mech', 'rev-a'],
      product_id: 'P-100',
      description: 'Left bracket',
      permissions: { view: [], edit: [], delete: [] },
      processing_status: 'pending',
      sha256: sha256(content),
      created_by: user.user.id,
    });

    const whole = await as(stack.api.app, user).get(file.url).buffer(true).parse(binary);
    expect(whole.status).toBe(200);
    expect(Buffer.compare(whole.body as Buffer, content)).toBe(0);
    expect(whole.headers).toMatchObject({
      'content-disposition': 'attachment; filename=bracket.stl',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'accept-ranges': 'bytes',
      etag: `"${sha256(content)}"`,
    });

    const part = await as(stack.api.app, user)
      .get(file.url)
      .set('Range', 'bytes=1000-1999')
      .buffer(true)
      .parse(binary);
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 1000-1999/${content.length}`);
    expect(Buffer.compare(part.body as Buffer, content.subarray(1000, 2000))).toBe(0);

    const beyond = await as(stack.api.app, user).get(file.url).set('Range', `bytes=${content.length}-`);
    expect(beyond.status).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${content.length}`);
    expect(beyond.body.code).toBe('range_not_satisfiable');

    const listed = await as(stack.api.app, user).get('/files').query({ folder_path: '/chassis/brackets' });
    expect(listed.body.items.map((f: FileRecord) => f.id)).toEqual([file.id]);
    const final = await settled(as(stack.api.app, user), file);
    expect(final).toEqual({
      ...file,
      processing_status: final.processing_status,
      classification: final.classification,
      metadata: final.metadata,
    });
  });

  test('a temporary access token opens that file only, read only, without a bearer header', async () => {
    const user = await signUp(stack.api.app);
    const a = await upload(as(stack.api.app, user), 'a.txt', 'alpha');
    const b = await upload(as(stack.api.app, user), 'b.txt', 'beta');
    const issued = await as(stack.api.app, user).get(`/files/${a.id}/access-token`);
    expect(issued.status).toBe(200);
    const minutes = (Date.parse(issued.body.expires_at) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14);
    expect(minutes).toBeLessThanOrEqual(15);

    const anonymous = request(stack.api.app);
    const opened = await anonymous
      .get(`/files/${a.id}/download`)
      .query({ token: issued.body.token })
      .buffer(true)
      .parse(binary);
    expect(opened.status).toBe(200);
    expect((opened.body as Buffer).toString()).toBe('alpha');
    const other = await anonymous.get(`/files/${b.id}/download`).query({ token: issued.body.token });
    expect(other.status).toBe(401);
    expect((await anonymous.get(`/files/${a.id}`).query({ token: issued.body.token })).status).toBe(401);
    expect((await anonymous.get(`/files/${a.id}/download`).query({ token: 'garbage' })).status).toBe(401);
    // An ordinary access token works in the query too (section 5.1.6).
    const byAccessToken = await anonymous.get(`/files/${b.id}/download`).query({ token: user.token });
    expect(byAccessToken.status).toBe(200);

    // The token ends with the session that issued it: after a global logout it opens nothing.
    await as(stack.api.app, user).post('/auth/logout').expect(204);
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // SESSION_CHECK_CACHE_MS
    const afterLogout = await anonymous.get(`/files/${a.id}/download`).query({ token: issued.body.token });
    expect([afterLogout.status, afterLogout.body.code]).toEqual([401, 'unauthorized']);
  });

  test('bad names and folders are refused and nothing is stored for them', async () => {
    const user = await signUp(stack.api.app);
    const client = as(stack.api.app, user);
    for (const name of ['../x.txt', 'a\\b.txt', '..', `${'x'.repeat(256)}.txt`]) {
      // form-data keeps a path only as `filepath` (a browser never sends one; a script may).
      const res = await client
        .post('/files/upload')
        .attach('file', Buffer.from('x'), { filepath: name } as unknown as { filename: string });
      expect({ name, status: res.status, code: res.body.code }).toEqual({
        name,
        status: 400,
        code: 'validation_failed',
      });
    }
    const folder = await client
      .post('/files/upload')
      .field('folder_path', '/a/../../etc')
      .attach('file', Buffer.from('x'), 'ok.txt');
    expect(folder.status).toBe(400);
    const unicode = await upload(client, 'Gehäuse Ø12 — 図面.step', 'ISO-10303-21;');
    expect(unicode.name).toBe('Gehäuse Ø12 — 図面.step'.normalize('NFC'));
    const download = await client.get(unicode.url);
    expect(download.headers['content-disposition']).toContain("filename*=UTF-8''Geh%C3%A4use");
    expect((await client.get('/files')).body.total).toBe(1);
    const keys = await stack.s3.keys();
    expect(keys.every((key) => key.startsWith('tenants/'))).toBe(true);
  });

  test('without a file part, or not multipart: 400 and 415', async () => {
    const user = await signUp(stack.api.app);
    const client = as(stack.api.app, user);
    const empty = await client.post('/files/upload').field('description', 'nothing');
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual([{ field: 'file', message: 'required' }]);
    const json = await client.post('/files/upload').send({ file: 'x' });
    expect(json.status).toBe(415);
  });
});

describe('revisions', () => {
  test('the same name is 409 unless replaced; a replace is a new revision; revert copies an old one', async () => {
    const user = await signUp(stack.api.app);
    const client = as(stack.api.app, user);
    const first = await upload(client, 'plate.dxf', 'first');
    const clash = await client.post('/files/upload').attach('file', Buffer.from('second'), 'plate.dxf');
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ code: 'conflict', file_id: first.id });
    const second = await upload(client, 'plate.dxf', 'second', { replace_if_exists: 'true' });
    expect(second).toMatchObject({ id: first.id, revision_count: 2, size: 6 });
    expect(second.current_revision_id).not.toBe(first.current_revision_id);

    const reverted = await client.post(`/files/${first.id}/revert/${first.current_revision_id}`);
    expect(reverted.status).toBe(201);
    expect(reverted.body).toMatchObject({ revision_count: 3, sha256: first.sha256 });
    const content = await client.get(first.url).buffer(true).parse(binary);
    expect((content.body as Buffer).toString()).toBe('first');

    const revisions = (await client.get(`/files/${first.id}/revisions`)).body as FileRevisionList;
    expect(revisions.items.map((r) => [r.number, r.reverted_from, r.current])).toEqual([
      [3, first.current_revision_id, true],
      [2, null, false],
      [1, null, false],
    ]);
    // Paged as every list: page 2 of size 2 holds the oldest, with the total of all three.
    const paged = await client.get(`/files/${first.id}/revisions`).query({ page: 2, pageSize: 2 });
    expect(paged.body).toMatchObject({ total: 3, page: 2, pageSize: 2 });
    expect(paged.body.items.map((r: { number: number }) => r.number)).toEqual([1]);
    const one = await client.get(`/files/${first.id}/revisions/${second.current_revision_id}`);
    expect(one.body).toMatchObject({ number: 2, size: 6, current: false });
    expect((await client.get(`/files/${first.id}/revisions/${first.id}`)).status).toBe(404);
  });

  test('every upload and revert is announced as file.uploaded.v1 through the outbox', async () => {
    const user = await signUp(stack.api.app);
    const file = await upload(as(stack.api.app, user), 'event.txt', 'hello');
    const rows = await stack.api.deps.dataSource.query(
      "SELECT envelope FROM outbox WHERE envelope->>'type' = 'file.uploaded.v1' AND envelope->'data'->>'fileId' = $1",
      [file.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].envelope).toMatchObject({
      actor: user.user.id,
      data: { fileId: file.id, revisionId: file.current_revision_id, size: 5, sha256: file.sha256 },
    });
  });
});

describe('permissions and isolation', () => {
  test('members see files by default; a view list hides it (404) and an edit list limits writes (403)', async () => {
    const { owner, member, tenant } = await team(stack.api);
    const asOwner = inTenant(stack.api, owner, tenant.id);
    const asMember = inTenant(stack.api, member, tenant.id);
    const file = await upload(asOwner, 'spec.pdf', '%PDF-1.7 spec');
    expect((await asMember.get(`/files/${file.id}`)).status).toBe(200);

    const limited = await asOwner
      .put(`/files/${file.id}/permissions`)
      .send({ view: [member.user.id], edit: [owner.user.id], delete: [] });
    expect(limited.status).toBe(200);
    expect(limited.body.permissions).toEqual({ view: [member.user.id], edit: [owner.user.id], delete: [] });
    expect((await asMember.get(`/files/${file.id}`)).status).toBe(200);
    const revert = await asMember.post(`/files/${file.id}/revert/${file.current_revision_id}`);
    expect(revert.status).toBe(403);
    expect((await asMember.delete(`/files/${file.id}`)).status).toBe(403);
    expect(
      (await asMember.put(`/files/${file.id}/permissions`).send({ view: [], edit: [], delete: [] })).status,
    ).toBe(403);

    await asOwner.put(`/files/${file.id}/permissions`).send({ view: [owner.user.id], edit: [], delete: [] });
    for (const path of [
      `/files/${file.id}`,
      file.url,
      `/files/${file.id}/revisions`,
      `/files/${file.id}/annotations`,
    ]) {
      expect({ path, status: (await asMember.get(path)).status }).toEqual({ path, status: 404 });
    }
    expect((await asMember.get('/files')).body.items).toEqual([]);
    expect((await asOwner.delete(`/files/${file.id}`)).status).toBe(204);
    expect((await asOwner.get(`/files/${file.id}`)).status).toBe(404);
  });

  test('another tenant never reaches a file', async () => {
    const [owner, outsider] = [await signUp(stack.api.app), await signUp(stack.api.app)];
    const file = await settled(
      as(stack.api.app, owner),
      await upload(as(stack.api.app, owner), 'secret.stl', binaryStlBox(4, 5, 6)),
    );
    const tenantId = file.tenant_id;
    const annotation = await as(stack.api.app, owner)
      .post(`/files/${file.id}/annotations`)
      .send({ text: 'hole too close', position: { x: 1, y: 2, z: 3 } });
    await expectTenantIsolation(stack.api.app, {
      owner,
      outsider,
      tenantId,
      resourceId: file.id,
      reads: [
        `/files/${file.id}`,
        `/files/${file.id}/revisions`,
        `/files/${file.id}/revisions/${file.current_revision_id}`,
        `/files/${file.id}/annotations`,
        `/files/${file.id}/cad-metadata`,
        file.url,
        file.preview_url,
        file.thumbnail_url,
      ],
      writes: [
        { method: 'put', path: `/files/${file.id}/permissions`, body: { view: [], edit: [], delete: [] } },
        { method: 'post', path: `/files/${file.id}/revert/${file.current_revision_id}` },
        {
          method: 'post',
          path: `/files/${file.id}/annotations`,
          body: { text: 'x', position: { x: 0, y: 0, z: 0 } },
        },
        {
          method: 'post',
          path: `/files/${file.id}/annotations/${annotation.body.id}/replies`,
          body: { text: 'x' },
        },
        {
          method: 'patch',
          path: `/files/${file.id}/annotations/${annotation.body.id}`,
          body: { status: 'in-progress' },
        },
        { method: 'delete', path: `/files/${file.id}` },
      ],
      lists: [{ path: '/files', ids: (body) => body.items.map((f: FileRecord) => f.id) }],
    });
    const outsiderClient = as(stack.api.app, outsider);
    expect((await outsiderClient.get(`/files/${file.id}/access-token`)).status).toBe(404);
    expect((await outsiderClient.get(`/shared/${file.id}`)).status).toBe(404);
    expect((await outsiderClient.get(`/shared/${file.id}/download`)).status).toBe(404);
    // A name taken in another tenant is free here: the outsider's upload is their own file.
    const theirs = await upload(outsiderClient, 'secret.stl', 'solid x', { replace_if_exists: 'true' });
    expect(theirs.id).not.toBe(file.id);
    expect(theirs.revision_count).toBe(1);
  });

  test('users of another tenant named in the permissions reach the file only through /shared', async () => {
    const [owner, partner, teammate, stranger] = await Promise.all([
      signUp(stack.api.app),
      signUp(stack.api.app),
      signUp(stack.api.app),
      signUp(stack.api.app),
    ]);
    const file = await upload(as(stack.api.app, owner), 'drawing.pdf', '%PDF-1.7 drawing');
    const partnerTeam = await as(stack.api.app, partner).post('/tenant/create').send({ name: 'Supplier' });
    await joinTenant(stack.api.app, partner, partnerTeam.body.id, teammate, 'member');
    const shared = await as(stack.api.app, owner)
      .put(`/files/${file.id}/permissions`)
      .send({ view: [partner.user.id], edit: [], delete: [partnerTeam.body.id] });
    expect(shared.status).toBe(200);

    for (const user of [partner, teammate]) {
      const list = await as(stack.api.app, user).get('/shared-with-me');
      expect(list.body.items.map((f: FileRecord) => f.id)).toEqual([file.id]);
      expect((await as(stack.api.app, user).get(`/shared/${file.id}`)).body.name).toBe('drawing.pdf');
      const bytes = await as(stack.api.app, user)
        .get(`/shared/${file.id}/download`)
        .buffer(true)
        .parse(binary);
      expect((bytes.body as Buffer).toString()).toBe('%PDF-1.7 drawing');
      // Inside their own tenants the file does not exist.
      expect((await as(stack.api.app, user).get(`/files/${file.id}`)).status).toBe(404);
      expect((await as(stack.api.app, user).delete(`/files/${file.id}`)).status).toBe(404);
    }
    expect((await as(stack.api.app, stranger).get('/shared-with-me')).body.items).toEqual([]);
    expect((await as(stack.api.app, stranger).get(`/shared/${file.id}`)).status).toBe(404);
    expect((await as(stack.api.app, stranger).get(`/shared/${file.id}/download`)).status).toBe(404);
    // The owner's own files are not "shared with" them.
    expect((await as(stack.api.app, owner).get('/shared-with-me')).body.items).toEqual([]);
  });
});
