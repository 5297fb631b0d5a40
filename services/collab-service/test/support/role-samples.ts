import { randomBytes } from 'node:crypto';
import { uniqueEmail } from '@hwp/platform/test-kit';
import type request from 'supertest';
import { collabAs, type Stack, type TestUser } from './collab-test-kit';
import { createPart, createPartVersion } from './factories';

/**
 * The samples of the route-by-role table (test/role-table.test.ts): for each role-gated operation,
 * a request that succeeds for every role at or above the required one.
 */

let stack: Stack;

/** The stack the samples call (set by the table test once it has started). */
export function sampleStack(started: Stack): void {
  stack = started;
}

export type Client = ReturnType<typeof collabAs>;

export interface SampleContext {
  workspace: string;
  /** The caller's username (non-members and anonymous callers get the target's). */
  self: string;
  /** Another member of the workspace (a viewer), for routes that act on a member. */
  target: string;
}

export interface Sample {
  /** A request that succeeds for every role at or above the required one. */
  request(client: Client, ctx: SampleContext): PromiseLike<request.Response>;
  /** Changes the caller's membership: the route gets a workspace and users of its own. */
  mutates?: boolean;
}

/** Who created each workspace of this test (an owner): the part factories act as them. */
export const owners = new Map<string, TestUser>();

/** A part of the workspace (through the factories), with a version in `status` when asked. */
async function seedPart(
  workspace: string,
  status?: 'draft' | 'in_review',
): Promise<{ partId: string; versionId: string }> {
  const owner = owners.get(workspace);
  if (!owner) throw new Error(`no owner recorded for ${workspace}`);
  const part = await createPart(stack.collab.app, owner, workspace);
  if (!status) return { partId: part.id, versionId: '' };
  const version = await createPartVersion(stack.collab.app, owner, workspace, part.id, { status });
  return { partId: part.id, versionId: version.id };
}

const partNumber = () => `RT-${randomBytes(6).toString('hex')}`;

/** A BOM of a new assembly with one line, as the workspace's owner; submitted when asked. */
async function seedBom(
  workspace: string,
  status: 'draft' | 'in_review' = 'draft',
): Promise<{ bomId: string; itemId: string; partId: string }> {
  const owner = owners.get(workspace);
  if (!owner) throw new Error(`no owner recorded for ${workspace}`);
  const client = collabAs(stack.collab.app, owner);
  const assembly = await createPart(stack.collab.app, owner, workspace);
  const child = await createPart(stack.collab.app, owner, workspace);
  const bom = await client
    .post('/v1/boms')
    .send({ workspace, assemblyPartId: assembly.id, type: 'engineering', revision: 'A' })
    .expect(201);
  const lines = await client
    .post(`/v1/boms/${bom.body.id}/items`)
    .query({ workspace })
    .send({ items: [{ childPartId: child.id, qty: 1 }] })
    .expect(200);
  if (status === 'in_review')
    await client.post(`/v1/boms/${bom.body.id}/submit`).send({ workspace }).expect(200);
  return { bomId: bom.body.id, itemId: lines.body.tree[0].itemId, partId: child.id };
}

/** A text file in `folder` of the workspace, uploaded by its owner (owners write any folder). */
async function seedFile(
  workspace: string,
  folder: string,
): Promise<{ filename: string; versionId: string; path: string }> {
  const owner = owners.get(workspace);
  if (!owner) throw new Error(`no owner recorded for ${workspace}`);
  const filename = `f-${randomBytes(4).toString('hex')}.txt`;
  const res = await collabAs(stack.collab.app, owner)
    .post('/v1/upload')
    .query({ workspace, username: folder })
    .attach('file', Buffer.from('seed'), filename)
    .expect(201);
  return { filename, versionId: res.body.versionId, path: `${workspace}/${folder}/${filename}` };
}

/** An STL in `folder`, uploaded by the owner, and (when `translated`) its translation asked for. */
async function seedModel(workspace: string, folder: string, translated = false): Promise<string> {
  const owner = collabAs(stack.collab.app, owners.get(workspace) as TestUser);
  const filename = `m-${randomBytes(4).toString('hex')}.stl`;
  const stl =
    'solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n';
  await owner
    .post('/v1/upload')
    .query({ workspace, username: folder })
    .attach('file', Buffer.from(stl), filename)
    .expect(201);
  if (translated)
    await owner
      .post('/api/viewer/translate-file')
      .send({ workspace, filename: `${folder}/${filename}` })
      .expect(202);
  return `${folder}/${filename}`;
}

/** A branch `b1` of a new file in `folder`, made by the owner. */
async function seedBranch(workspace: string, folder: string) {
  const file = await seedFile(workspace, folder);
  await collabAs(stack.collab.app, owners.get(workspace) as TestUser)
    .post('/v1/branches/create')
    .send({ workspace, username: folder, base: file.filename, branch: 'b1' })
    .expect(201);
  return file;
}

/** The caller's address when they are a member of the workspace, else the target's (a member). */
async function memberEmail(s: SampleContext): Promise<string> {
  const rows: { email: string }[] = await stack.collab.deps.dataSource.query(
    `SELECT u.email FROM collab_users u JOIN workspace_members m ON m.user_id = u.id JOIN workspaces w ON w.id = m.workspace_id
      WHERE w.name = $1 AND u.username = ANY($2::text[]) ORDER BY (u.username = $3) DESC`,
    [s.workspace, [s.self, s.target], s.self],
  );
  return rows[0].email;
}

/** A review made by the owner with the caller (when a member) as its reviewer, one task on it. */
async function seedReview(s: SampleContext): Promise<{ id: string; taskId: string }> {
  const owner = collabAs(stack.collab.app, owners.get(s.workspace) as TestUser);
  const review = await owner
    .post('/v1/reviews')
    .send({ path: randomPath(s), reviewerEmail: await memberEmail(s) })
    .expect(201);
  const task = await owner
    .post(`/v1/reviews/${review.body.id}/tasks`)
    .send({ workspace: s.workspace, title: 't' })
    .expect(201);
  return { id: review.body.id, taskId: task.body.id };
}

const randomPath = (s: SampleContext) => `${s.workspace}/${s.self}/p-${randomBytes(4).toString('hex')}.txt`;

/** `GET /v1/boms/{id}/<suffix>` of a new BOM. */
const bomRead =
  (suffix: string, query: Record<string, string> = {}): Sample['request'] =>
  async (c, s) =>
    c
      .get(`/v1/boms/${(await seedBom(s.workspace)).bomId}${suffix}`)
      .query({ workspace: s.workspace, ...query });

/** Keyed by `METHOD /openapi/{path}`. */
export const SAMPLES: Record<string, Sample> = {
  'POST /v1/parts': {
    request: (c, s) =>
      c.post('/v1/parts').send({ workspace: s.workspace, partNumber: partNumber(), name: 'x' }),
  },
  'GET /v1/parts': {
    request: (c, s) => c.get('/v1/parts').query({ workspace: s.workspace }),
  },
  'POST /v1/parts/import': {
    request: (c, s) =>
      c
        .post('/v1/parts/import')
        .field('workspace', s.workspace)
        .field('dryRun', 'true')
        .attach('file', Buffer.from(`part_number,name\n${partNumber()},x\n`), {
          filename: 'parts.csv',
          contentType: 'text/csv',
        }),
  },
  'GET /v1/parts/{id}': {
    request: async (c, s) =>
      c.get(`/v1/parts/${(await seedPart(s.workspace)).partId}`).query({ workspace: s.workspace }),
  },
  'PATCH /v1/parts/{id}': {
    request: async (c, s) =>
      c
        .patch(`/v1/parts/${(await seedPart(s.workspace)).partId}`)
        .send({ workspace: s.workspace, name: 'y' }),
  },
  'POST /v1/parts/{id}/versions': {
    request: async (c, s) =>
      c
        .post(`/v1/parts/${(await seedPart(s.workspace)).partId}/versions`)
        .send({ workspace: s.workspace, revision: 'A' }),
  },
  'GET /v1/parts/{id}/versions': {
    request: async (c, s) =>
      c.get(`/v1/parts/${(await seedPart(s.workspace)).partId}/versions`).query({ workspace: s.workspace }),
  },
  'PATCH /v1/parts/{id}/versions/{versionId}': {
    request: async (c, s) => {
      const { partId, versionId } = await seedPart(s.workspace, 'draft');
      return c
        .patch(`/v1/parts/${partId}/versions/${versionId}`)
        .send({ workspace: s.workspace, data: { a: 1 } });
    },
  },
  'POST /v1/parts/{id}/versions/{versionId}/submit': {
    request: async (c, s) => {
      const { partId, versionId } = await seedPart(s.workspace, 'draft');
      return c.post(`/v1/parts/${partId}/versions/${versionId}/submit`).send({ workspace: s.workspace });
    },
  },
  'POST /v1/parts/{id}/versions/{versionId}/approve': {
    request: async (c, s) => {
      const { partId, versionId } = await seedPart(s.workspace, 'in_review');
      return c.post(`/v1/parts/${partId}/versions/${versionId}/approve`).query({ workspace: s.workspace });
    },
  },
  'POST /v1/parts/{id}/versions/{versionId}/reject': {
    request: async (c, s) => {
      const { partId, versionId } = await seedPart(s.workspace, 'in_review');
      return c
        .post(`/v1/parts/${partId}/versions/${versionId}/reject`)
        .send({ workspace: s.workspace, reason: 'no' });
    },
  },
  'GET /v1/parts/{id}/where-used': {
    request: async (c, s) =>
      c.get(`/v1/parts/${(await seedPart(s.workspace)).partId}/where-used`).query({ workspace: s.workspace }),
  },
  'POST /v1/boms/import': {
    request: async (c, s) =>
      c
        .post('/v1/boms/import')
        .field({ workspace: s.workspace, bomId: (await seedBom(s.workspace)).bomId, dryRun: 'true' })
        .attach('file', Buffer.from(`pn,qty\n${partNumber()},1\n`), {
          filename: 'bom.csv',
          contentType: 'text/csv',
        }),
  },
  'POST /v1/boms': {
    request: async (c, s) =>
      c.post('/v1/boms').send({
        workspace: s.workspace,
        assemblyPartId: (await seedPart(s.workspace)).partId,
        type: 'engineering',
        revision: 'A',
      }),
  },
  'GET /v1/boms': { request: (c, s) => c.get('/v1/boms').query({ workspace: s.workspace }) },
  'GET /v1/boms/{id}': { request: bomRead('') },
  'POST /v1/boms/{id}/items': {
    request: async (c, s) => {
      const { bomId, itemId } = await seedBom(s.workspace);
      return c
        .post(`/v1/boms/${bomId}/items`)
        .query({ workspace: s.workspace })
        .send({ items: [{ id: itemId, qty: 2 }] });
    },
  },
  'POST /v1/boms/{id}/submit': {
    request: async (c, s) =>
      c.post(`/v1/boms/${(await seedBom(s.workspace)).bomId}/submit`).send({ workspace: s.workspace }),
  },
  'POST /v1/boms/{id}/approve': {
    request: async (c, s) =>
      c
        .post(`/v1/boms/${(await seedBom(s.workspace, 'in_review')).bomId}/approve`)
        .send({ workspace: s.workspace }),
  },
  'POST /v1/boms/{id}/reject': {
    request: async (c, s) =>
      c
        .post(`/v1/boms/${(await seedBom(s.workspace, 'in_review')).bomId}/reject`)
        .send({ workspace: s.workspace, reason: 'no' }),
  },
  'GET /v1/boms/{id}/diff': { request: bomRead('/diff', { leftRev: 'A', rightRev: 'A' }) },
  'GET /v1/boms/{id}/export.csv': { request: bomRead('/export.csv') },
  'GET /v1/boms/{id}/export.xlsx': { request: bomRead('/export.xlsx') },
  'GET /v1/boms/{id}/export.erp.csv': { request: bomRead('/export.erp.csv') },
  'GET /v1/boms/{id}/cost-rollup': { request: bomRead('/cost-rollup') },
  'POST /v1/boms/{id}/items/{itemId}/alternates': {
    request: async (c, s) => {
      const { bomId, itemId } = await seedBom(s.workspace);
      const alternate = await seedPart(s.workspace);
      return c
        .post(`/v1/boms/${bomId}/items/${itemId}/alternates`)
        .query({ workspace: s.workspace })
        .send({ alternates: [{ partId: alternate.partId, approval: 'conditional' }] });
    },
  },
  'POST /v1/boms/{id}/derive-mbom': {
    request: async (c, s) =>
      c
        .post(`/v1/boms/${(await seedBom(s.workspace)).bomId}/derive-mbom`)
        .send({ workspace: s.workspace, revision: 'M1' }),
  },
  'POST /v1/boms/{id}/effectivity/validate': {
    request: async (c, s) => {
      const { bomId, itemId } = await seedBom(s.workspace);
      return c
        .post(`/v1/boms/${bomId}/effectivity/validate`)
        .send({ workspace: s.workspace, itemId, effectivity: { serialFrom: 1 } });
    },
  },
  'POST /v1/upload': {
    request: (c, s) =>
      c
        .post('/v1/upload')
        .query({ workspace: s.workspace, username: s.self })
        .attach('file', Buffer.from('x'), `u-${randomBytes(4).toString('hex')}.txt`),
  },
  'POST /v1/uploads': {
    request: (c, s) =>
      c
        .post('/v1/uploads')
        .query({ workspace: s.workspace, username: s.self })
        .attach('files', Buffer.from('x'), `u-${randomBytes(4).toString('hex')}.txt`),
  },
  'GET /v1/files': {
    request: (c, s) => c.get('/v1/files').query({ workspace: s.workspace, username: s.target }),
  },
  'GET /v1/files/all': { request: (c, s) => c.get('/v1/files/all').query({ workspace: s.workspace }) },
  'GET /v1/file': {
    request: async (c, s) => {
      const { filename } = await seedFile(s.workspace, s.target);
      return c.get('/v1/file').query({ workspace: s.workspace, username: s.target, filename });
    },
  },
  'GET /v1/filemeta': {
    request: async (c, s) => {
      const { filename } = await seedFile(s.workspace, s.target);
      return c.get('/v1/filemeta').query({ workspace: s.workspace, username: s.target, filename });
    },
  },
  'DELETE /v1/file': {
    request: async (c, s) => {
      const { filename } = await seedFile(s.workspace, s.self);
      return c.delete('/v1/file').query({ workspace: s.workspace, username: s.self, filename });
    },
  },
  'GET /v1/serve/{workspace}/{username}/{filename}': {
    request: async (c, s) =>
      c.get(`/v1/serve/${s.workspace}/${s.target}/${(await seedFile(s.workspace, s.target)).filename}`),
  },
  'HEAD /v1/serve/{workspace}/{username}/{filename}': {
    request: async (c, s) =>
      c.head(`/v1/serve/${s.workspace}/${s.target}/${(await seedFile(s.workspace, s.target)).filename}`),
  },
  'GET /signed-url': {
    request: async (c, s) =>
      c.get('/signed-url').query({
        path: `/v1/serve/${s.workspace}/${s.target}/${(await seedFile(s.workspace, s.target)).filename}`,
      }),
  },
  'GET /v1/trash': {
    request: (c, s) => c.get('/v1/trash').query({ workspace: s.workspace, username: s.self }),
  },
  'POST /v1/trash/restore': {
    request: async (c, s) => {
      const { filename } = await seedFile(s.workspace, s.self);
      const owner = collabAs(stack.collab.app, owners.get(s.workspace) as TestUser);
      const gone = await owner
        .delete('/v1/file')
        .query({ workspace: s.workspace, username: s.self, filename })
        .expect(200);
      return c
        .post('/v1/trash/restore')
        .send({ workspace: s.workspace, username: s.self, key: gone.body.key });
    },
  },
  'GET /v1/versions': {
    request: async (c, s) =>
      c.get('/v1/versions').query({ path: (await seedFile(s.workspace, s.target)).path }),
  },
  'GET /v1/timeline': {
    request: async (c, s) =>
      c.get('/v1/timeline').query({ path: (await seedFile(s.workspace, s.target)).path }),
  },
  'POST /v1/revert': {
    request: async (c, s) => {
      const { path, versionId } = await seedFile(s.workspace, s.self);
      return c.post('/v1/revert').send({ path, versionId });
    },
  },
  'GET /v1/branches': {
    request: async (c, s) =>
      c.get('/v1/branches').query({
        workspace: s.workspace,
        username: s.target,
        base: (await seedFile(s.workspace, s.target)).filename,
      }),
  },
  'POST /v1/branches/create': {
    request: async (c, s) =>
      c.post('/v1/branches/create').send({
        workspace: s.workspace,
        username: s.self,
        base: (await seedFile(s.workspace, s.self)).filename,
        branch: 'b2',
      }),
  },
  'POST /v1/branches/delete': {
    request: async (c, s) =>
      c.post('/v1/branches/delete').send({
        workspace: s.workspace,
        username: s.self,
        base: (await seedBranch(s.workspace, s.self)).filename,
        branch: 'b1',
      }),
  },
  'POST /v1/merge': {
    request: async (c, s) =>
      c.post('/v1/merge').send({
        workspace: s.workspace,
        username: s.self,
        filename: (await seedBranch(s.workspace, s.self)).filename,
        fromBranch: 'b1',
      }),
  },
  'GET /v1/comments': { request: (c, s) => c.get('/v1/comments').query({ path: randomPath(s) }) },
  'POST /v1/comments': {
    request: (c, s) => c.post('/v1/comments').send({ path: randomPath(s), body: 'hi' }),
  },
  'GET /v1/locks': { request: (c, s) => c.get('/v1/locks').query({ path: randomPath(s) }) },
  'POST /v1/locks/lock': { request: (c, s) => c.post('/v1/locks/lock').send({ path: randomPath(s) }) },
  'POST /v1/locks/unlock': {
    request: async (c, s) => {
      const path = randomPath(s);
      const locked = await c.post('/v1/locks/lock').send({ path });
      return c
        .post('/v1/locks/unlock')
        .send({ path, lockId: locked.body.lockId ?? '00000000-0000-4000-8000-000000000000' });
    },
  },
  'POST /v1/locks/force-unlock': {
    request: async (c, s) => {
      const path = randomPath(s);
      await collabAs(stack.collab.app, owners.get(s.workspace) as TestUser)
        .post('/v1/locks/lock')
        .send({ path })
        .expect(200);
      return c.post('/v1/locks/force-unlock').send({ path, message: 'needed' });
    },
  },
  'POST /v1/locks/request': { request: (c, s) => c.post('/v1/locks/request').send({ path: randomPath(s) }) },
  'POST /v1/locks/lock-all': {
    request: (c, s) => c.post('/v1/locks/lock-all').send({ workspace: s.workspace }),
  },
  'POST /v1/locks/unlock-all': {
    request: (c, s) => c.post('/v1/locks/unlock-all').send({ workspace: s.workspace }),
  },
  'GET /v1/conflicts': {
    request: (c, s) => c.get('/v1/conflicts').query({ workspace: s.workspace, username: s.target }),
  },
  'POST /v1/conflicts/resolve': {
    request: async (c, s) => {
      const { path } = await seedFile(s.workspace, s.self);
      return c.post('/v1/conflicts/resolve').send({ baseName: path, acceptedPath: path });
    },
  },
  'GET /v1/reviews': { request: (c, s) => c.get('/v1/reviews').query({ path: randomPath(s) }) },
  'POST /v1/reviews': {
    request: async (c, s) =>
      c.post('/v1/reviews').send({ path: randomPath(s), reviewerEmail: await memberEmail(s) }),
  },
  'PATCH /v1/reviews/{id}': {
    request: async (c, s) =>
      c
        .patch(`/v1/reviews/${(await seedReview(s)).id}`)
        .send({ workspace: s.workspace, status: 'in_review' }),
  },
  'POST /v1/reviews/{id}/tasks': {
    request: async (c, s) =>
      c
        .post(`/v1/reviews/${(await seedReview(s)).id}/tasks`)
        .send({ workspace: s.workspace, title: 'check holes' }),
  },
  'PATCH /v1/reviews/{id}/tasks/{taskId}': {
    request: async (c, s) => {
      const { id, taskId } = await seedReview(s);
      return c
        .patch(`/v1/reviews/${id}/tasks/${taskId}`)
        .send({ workspace: s.workspace, status: 'in_progress' });
    },
  },
  'GET /v1/tasks': { request: (c, s) => c.get('/v1/tasks').query({ path: randomPath(s) }) },
  'POST /v1/tasks': { request: (c, s) => c.post('/v1/tasks').send({ path: randomPath(s), title: 'x' }) },
  'PATCH /v1/tasks/{id}': {
    request: async (c, s) => {
      const owner = collabAs(stack.collab.app, owners.get(s.workspace) as TestUser);
      const task = await owner
        .post('/v1/tasks')
        .send({ path: randomPath(s), title: 'x', ownerEmail: await memberEmail(s) })
        .expect(201);
      return c.patch(`/v1/tasks/${task.body.id}`).send({ workspace: s.workspace, status: 'in_progress' });
    },
  },
  'DELETE /v1/tasks/{id}': {
    request: async (c, s) => {
      // The caller's own task (creator may delete); one below the role deletes the owner's.
      const mine = await c.post('/v1/tasks').send({ path: randomPath(s), title: 'mine' });
      const owner = collabAs(stack.collab.app, owners.get(s.workspace) as TestUser);
      const id =
        mine.body.id ??
        (
          await owner
            .post('/v1/tasks')
            .send({ path: randomPath(s), title: 'theirs' })
            .expect(201)
        ).body.id;
      return c.delete(`/v1/tasks/${id}`).query({ workspace: s.workspace });
    },
  },
  'GET /v1/workspace/stats': {
    request: (c, s) => c.get('/v1/workspace/stats').query({ workspace: s.workspace }),
  },
  'GET /v1/workspace/reviews': {
    request: (c, s) => c.get('/v1/workspace/reviews').query({ workspace: s.workspace, status: 'all' }),
  },
  'GET /v1/workspace/tasks': {
    request: (c, s) => c.get('/v1/workspace/tasks').query({ workspace: s.workspace, limit: 5 }),
  },
  'POST /api/viewer/translate-file': {
    request: async (c, s) =>
      c
        .post('/api/viewer/translate-file')
        .send({ workspace: s.workspace, filename: await seedModel(s.workspace, s.self) }),
  },
  'GET /api/viewer/status-map': {
    request: (c, s) => c.get('/api/viewer/status-map').query({ workspace: s.workspace }),
  },
  'GET /api/viewer/models/lookup': {
    request: async (c, s) =>
      c
        .get('/api/viewer/models/lookup')
        .query({ workspace: s.workspace, filename: await seedModel(s.workspace, s.self, true) }),
  },
  'GET /v1/review-templates': {
    request: (c, s) => c.get('/v1/review-templates').query({ workspace: s.workspace }),
  },
  'POST /v1/review-templates': {
    request: (c, s) =>
      c
        .post('/v1/review-templates')
        .send({ workspace: s.workspace, name: `T ${randomBytes(4).toString('hex')}`, checklist: ['a'] }),
  },
  'DELETE /v1/review-templates/{id}': {
    request: async (c, s) => {
      const owner = collabAs(stack.collab.app, owners.get(s.workspace) as TestUser);
      const t = await owner
        .post('/v1/review-templates')
        .send({ workspace: s.workspace, name: `D ${randomBytes(4).toString('hex')}`, checklist: [] })
        .expect(201);
      return c.delete(`/v1/review-templates/${t.body.id}`).query({ workspace: s.workspace });
    },
  },
  'GET /v1/workspaces/{name}/bom-settings': {
    request: (c, s) => c.get(`/v1/workspaces/${s.workspace}/bom-settings`),
  },
  'POST /v1/workspaces/{name}/bom-settings': {
    request: (c, s) => c.post(`/v1/workspaces/${s.workspace}/bom-settings`).send({ numbering_rules: {} }),
  },
  'POST /v1/workspaces/{name}/api-keys': {
    request: (c, s) => c.post(`/v1/workspaces/${s.workspace}/api-keys`).send({ name: 'erp' }),
  },
  'GET /v1/workspaces/{name}/api-keys': {
    request: (c, s) => c.get(`/v1/workspaces/${s.workspace}/api-keys`),
  },
  'DELETE /v1/workspaces/{name}/api-keys/{keyId}': {
    request: async (c, s) => {
      const owner = owners.get(s.workspace) as TestUser;
      const key = await collabAs(stack.collab.app, owner)
        .post(`/v1/workspaces/${s.workspace}/api-keys`)
        .send({ name: 'old' })
        .expect(201);
      return c.delete(`/v1/workspaces/${s.workspace}/api-keys/${key.body.id}`);
    },
  },
  'GET /v1/workspaces/{name}': {
    request: (c, s) => c.get(`/v1/workspaces/${s.workspace}`),
  },
  'GET /v1/workspaces/{name}/members': {
    request: (c, s) => c.get(`/v1/workspaces/${s.workspace}/members`),
  },
  'PATCH /v1/workspaces/{name}/members/{username}': {
    request: (c, s) => c.patch(`/v1/workspaces/${s.workspace}/members/${s.target}`).send({ role: 'viewer' }),
  },
  // Declared viewer because anyone may leave; removing someone else is the service's manager check.
  'DELETE /v1/workspaces/{name}/members/{username}': {
    mutates: true,
    request: (c, s) => c.delete(`/v1/workspaces/${s.workspace}/members/${s.self}`),
  },
  'GET /v1/users': {
    request: (c, s) => c.get('/v1/users').query({ workspace: s.workspace }),
  },
  // A stream stays open: read the first chunk (`retry:`, or the error body), then hang up.
  'GET /v1/events': {
    request: (c, s) =>
      c
        .get('/v1/events')
        .query({ workspace: s.workspace })
        .buffer(true)
        .parse((res, done) => {
          let text = '';
          let settled = false;
          const settle = (body: unknown) => {
            if (settled) return;
            settled = true;
            done(null, body);
          };
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
            if (res.statusCode === 200) {
              settle({});
              // supertest types the parser's response as its own Response; it is node's IncomingMessage.
              (res as unknown as { destroy(): void }).destroy();
            }
          });
          res.on('end', () => settle(text ? JSON.parse(text) : {}));
        }),
  },
  'POST /api/invitations/send': {
    request: (c, s) =>
      c
        .post('/api/invitations/send')
        .send({ email: uniqueEmail('guest'), workspace: s.workspace, role: 'viewer' }),
  },
};
