import type { ApiKeyList, CreatedApiKey } from '@hwp/contracts';
import request from 'supertest';
import { bomKit } from '#test/boms-kit';
import { type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

describe('workspace API keys for ERP integrations', () => {
  let t: Team;
  let kit: ReturnType<typeof bomKit>;
  let bomId: string;
  let created: CreatedApiKey;
  const withKey = (key: string) => ({
    get: (path: string) => request(stack.collab.app).get(path).set('Authorization', `Bearer ${key}`),
    post: (path: string) => request(stack.collab.app).post(path).set('Authorization', `Bearer ${key}`),
  });
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'keys');
    kit = bomKit(stack, t);
    const asm = await kit.part('ERP-ASM');
    const screw = await kit.part('ERP-SCREW', { unit_cost: 0.1, currency: 'EUR' });
    const bom = await kit.bom(asm, 'A');
    await kit.lines(bom, [{ childPartId: screw.id, qty: 8 }]);
    bomId = bom.id;
    await kit.as(t.engineer).post(`/v1/workspaces/${t.workspace}/api-keys`).send({ name: 'ERP' }).expect(403);
    const res = await kit
      .as(t.manager)
      .post(`/v1/workspaces/${t.workspace}/api-keys`)
      .send({ name: 'ERP' })
      .expect(201);
    created = res.body as CreatedApiKey;
  });

  test('the key is shown once and stored hashed', async () => {
    expect(created.key).toMatch(/^hwpk_[0-9a-f-]{36}_[\w-]{43}$/);
    expect(created).toMatchObject({ name: 'ERP', workspace: t.workspace, lastUsedAt: null, revokedAt: null });
    const list = await kit.as(t.manager).get(`/v1/workspaces/${t.workspace}/api-keys`).expect(200);
    expect(JSON.stringify(list.body)).not.toContain(created.key.slice(-43));
    const [row] = await stack.collab.deps.dataSource.query(
      'SELECT secret_hash FROM workspace_api_keys WHERE id = $1',
      [created.id],
    );
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(created.key).not.toContain(row.secret_hash);
  });

  test('it reads export.erp.csv, gets 304 with the ETag, and its use is recorded', async () => {
    const key = withKey(created.key);
    const first = await key.get(`/v1/boms/${bomId}/export.erp.csv`).query(kit.q).expect(200);
    expect(first.text).toContain('ERP-SCREW');
    const etag = first.headers.etag as string;
    const again = await key.get(`/v1/boms/${bomId}/export.erp.csv`).query(kit.q).set('If-None-Match', etag);
    expect(again.status).toBe(304);
    expect(again.text ?? '').toBe('');
    await key.get(`/v1/boms/${bomId}`).query(kit.q).expect(200);
    await key.get('/v1/parts').query(kit.q).expect(200);
    await key.get('/v1/boms').query(kit.q).expect(200);
    const list = (await kit.as(t.manager).get(`/v1/workspaces/${t.workspace}/api-keys`).expect(200))
      .body as ApiKeyList;
    expect(list.items[0].lastUsedAt).not.toBeNull();
  });

  test('it gets 403 on any write and on what is not a BOM or part read; 404 for another workspace', async () => {
    const key = withKey(created.key);
    const writes = [
      key
        .post('/v1/boms')
        .send({ workspace: t.workspace, assemblyPartId: bomId, type: 'engineering', revision: 'Z' }),
      key.post(`/v1/boms/${bomId}/items`).query(kit.q).send({ items: [] }),
      key.post(`/v1/boms/${bomId}/submit`).send(kit.q),
      key.post('/v1/parts').send({ workspace: t.workspace, name: 'x' }),
      key.post(`/v1/workspaces/${t.workspace}/api-keys`).send({ name: 'more' }),
      key.get(`/v1/workspaces/${t.workspace}/members`),
      key.get('/v1/events').query(kit.q),
    ];
    for (const res of await Promise.all(writes)) {
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'forbidden' });
    }
    const other = await teamWorkspace(stack, 'keysother');
    await key.get('/v1/boms').query({ workspace: other.workspace }).expect(404);
  });

  test('a revoked key and a made-up one get 401', async () => {
    const res = await kit
      .as(t.manager)
      .post(`/v1/workspaces/${t.workspace}/api-keys`)
      .send({ name: 'old' })
      .expect(201);
    const old = res.body as CreatedApiKey;
    await withKey(old.key).get(`/v1/boms/${bomId}/export.csv`).query(kit.q).expect(200);
    const revoked = await kit
      .as(t.manager)
      .delete(`/v1/workspaces/${t.workspace}/api-keys/${old.id}`)
      .expect(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    for (const bad of [old.key, `${old.key.slice(0, -4)}AAAA`, 'hwpk_nonsense']) {
      const read = await withKey(bad).get(`/v1/boms/${bomId}/export.csv`).query(kit.q);
      expect({ status: read.status, code: read.body.code }).toEqual({ status: 401, code: 'unauthorized' });
      const write = await withKey(bad).post('/v1/parts').send({ workspace: t.workspace, name: 'x' });
      expect(write.status).toBe(401);
    }
    await withKey(created.key).get(`/v1/boms/${bomId}/export.csv`).query(kit.q).expect(200);
  });
});
