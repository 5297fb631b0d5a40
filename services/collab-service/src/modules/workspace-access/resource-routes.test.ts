import type { Bom, DesignReview, Part, Task } from '@hwp/contracts';
import { bomKit } from '#test/boms-kit';
import { addMembers, type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';

// Issue 35, finding 1: an id in a path names its own workspace. Requests shaped exactly as the
// interface document's rows (section 4.6, 4.7, 4.10) name no workspace, and must work as they are.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

describe('routes on one resource take its workspace from the resource', () => {
  let t: Team;
  let other: Team;
  let boms: ReturnType<typeof bomKit>;
  let files: ReturnType<typeof filesKit>;
  beforeAll(async () => {
    [t, other] = await Promise.all([teamWorkspace(stack, 'byid'), teamWorkspace(stack, 'byid-other')]);
    boms = bomKit(stack, t);
    files = filesKit(stack, t);
    // The team's engineer is a member of the other workspace too: a `workspace` naming it must not
    // lead to rows of this one.
    await addMembers(stack, other.id, [
      [t.engineer, 'engineer'],
      [t.manager, 'manager'],
    ]);
  });

  test('part versions and BOMs: the document-shaped requests, with the roles their rows name', async () => {
    const asm = await boms.part('BYID-ASM');
    const child = await boms.part('BYID-C');
    const alt = await boms.part('BYID-ALT');
    const { as } = boms;

    const version = await as(t.engineer).post(`/v1/parts/${asm.id}/versions`).send({ revision: 'B' });
    expect(version.status).toBe(201);
    const v = version.body.id as string;
    expect((await as(t.engineer).post(`/v1/parts/${asm.id}/versions/${v}/submit`)).status).toBe(200);
    expect((await as(t.manager).post(`/v1/parts/${asm.id}/versions/${v}/reject`).send({})).status).toBe(200);
    expect((await as(t.viewer).get(`/v1/parts/${asm.id}`)).status).toBe(200);
    expect((await as(t.viewer).get(`/v1/parts/${asm.id}/versions`)).status).toBe(200);
    expect((await as(t.viewer).get(`/v1/parts/${child.id}/where-used`)).status).toBe(200);

    const bom = await boms.bom(asm, 'A');
    const items = await as(t.engineer)
      .post(`/v1/boms/${bom.id}/items`)
      .send({ items: [{ childPartId: child.id, qty: 2, refdes: 'R1-R2' }] });
    expect(items.status).toBe(200);
    const line = items.body.tree[0];
    const lineId = line.id ?? line.itemId;
    const alternates = await as(t.manager)
      .post(`/v1/boms/${bom.id}/items/${lineId}/alternates`)
      .send({ alternates: [{ partId: alt.id, approval: 'approved', rationale: 'second source' }] });
    expect(alternates.status).toBe(200);
    const validate = await as(t.engineer)
      .post(`/v1/boms/${bom.id}/effectivity/validate`)
      .send({ effectivity: { dateFrom: '2027-01-01' }, partId: child.id });
    expect(validate.status).toBe(200);
    for (const path of ['', '/cost-rollup', '/export.csv', '/export.erp.csv']) {
      expect([path, (await as(t.viewer).get(`/v1/boms/${bom.id}${path}`)).status]).toEqual([path, 200]);
    }
    const imported = await as(t.engineer)
      .post('/v1/boms/import')
      .field({ bomId: bom.id, dryRun: 'true' })
      .attach('file', Buffer.from(`part_number,qty\nBYID-C,3\n`), {
        filename: 'bom.csv',
        contentType: 'text/csv',
      });
    expect(imported.status).toBe(200);
    expect((await as(t.engineer).post(`/v1/boms/${bom.id}/submit`)).status).toBe(200);
    expect((await as(t.manager).post(`/v1/boms/${bom.id}/approve`)).status).toBe(200);
    const mbom = await as(t.engineer).post(`/v1/boms/${bom.id}/derive-mbom`).send({ revision: 'M1' });
    expect(mbom.status).toBe(201);
    expect((await as(t.engineer).post(`/v1/boms/${mbom.body.id}/submit`)).status).toBe(200);
    expect((await as(t.manager).post(`/v1/boms/${mbom.body.id}/reject`).send({ reason: 'no' })).status).toBe(
      200,
    );
  });

  test('reviews, review tasks, tasks and templates: the document-shaped requests', async () => {
    const { as } = files;
    const path = files.path(await files.username(t.engineer), 'bracket.step');
    const review = (await as(t.engineer).post('/v1/reviews').send({ path, reviewerEmail: t.viewer.email }))
      .body as DesignReview;
    expect((await as(t.viewer).patch(`/v1/reviews/${review.id}`).send({ status: 'in_review' })).status).toBe(
      200,
    );
    const reviewTask = await as(t.viewer).post(`/v1/reviews/${review.id}/tasks`).send({ title: 'Fillets' });
    expect(reviewTask.status).toBe(201);
    const moved = await as(t.viewer)
      .patch(`/v1/reviews/${review.id}/tasks/${reviewTask.body.id}`)
      .send({ status: 'in_progress' });
    expect(moved.status).toBe(200);

    const task = (await as(t.engineer).post('/v1/tasks').send({ path, title: 'Tolerance stack' }))
      .body as Task;
    expect((await as(t.engineer).patch(`/v1/tasks/${task.id}`).send({ status: 'in_progress' })).status).toBe(
      200,
    );
    expect((await as(t.engineer).delete(`/v1/tasks/${task.id}`)).status).toBe(200);

    // The template row names no workspace: the caller's only workspace where they are manager+.
    const lone = await teamWorkspace(stack, 'byid-lone');
    const template = await as(lone.manager)
      .post('/v1/review-templates')
      .send({ name: 'Release', checklist: ['Drawing'] });
    expect(template.status).toBe(201);
    const loneTemplates = await as(lone.engineer)
      .get('/v1/review-templates')
      .query({ workspace: lone.workspace });
    expect(loneTemplates.body.items.map((x: { id: string }) => x.id)).toEqual([template.body.id]);
    // Manager of two workspaces: which one must be said (400 naming workspace), in the body or query.
    const ambiguous = await as(t.manager).post('/v1/review-templates').send({ name: 'Both', checklist: [] });
    expect(ambiguous.status).toBe(400);
    expect(JSON.stringify(ambiguous.body)).toContain('workspace');
    const byQuery = await as(t.manager)
      .post('/v1/review-templates')
      .query({ workspace: t.workspace })
      .send({ name: 'Named', checklist: [] });
    expect(byQuery.status).toBe(201);
    expect((await as(t.manager).delete(`/v1/review-templates/${byQuery.body.id}`)).status).toBe(200);
  });

  test('a workspace sent next to an id must be the resource’s; strangers get what an unknown id gets', async () => {
    const part: Part = await boms.part('BYID-FOREIGN');
    const bom: Bom = await boms.bom(part, 'A');
    const { as } = boms;
    // The engineer is a member of `other` too: naming it next to this workspace's ids finds nothing.
    const foreign = await as(t.engineer)
      .post(`/v1/parts/${part.id}/versions`)
      .query({ workspace: other.workspace })
      .send({ revision: 'X' });
    expect(foreign.status).toBe(404);
    const foreignBody = await as(t.engineer)
      .post(`/v1/boms/${bom.id}/items`)
      .send({ workspace: other.workspace, items: [{ childPartId: part.id, qty: 1 }] });
    expect(foreignBody.status).toBe(404);
    expect((await boms.detail(bom)).tree).toEqual([]);
    // Naming the right workspace is still accepted (the form before this change).
    const named = await as(t.viewer)
      .get(`/v1/boms/${bom.id}`)
      .query({ workspace: t.workspace.toUpperCase() });
    expect(named.status).toBe(200);

    // A member of another workspace only: the same 404 as for an id that does not exist.
    const stranger = await as(other.viewer).get(`/v1/boms/${bom.id}`);
    const unknown = await as(other.viewer).get('/v1/boms/00000000-0000-4000-8000-000000000000');
    expect([stranger.status, unknown.status]).toEqual([404, 404]);
    expect(stranger.body.message).toBe(unknown.body.message);
    expect((await as(other.viewer).patch(`/v1/parts/${part.id}`).send({ name: 'mine now' })).status).toBe(
      404,
    );
    // Below the role the row names: 403 as before.
    expect((await as(t.viewer).post(`/v1/boms/${bom.id}/submit`)).status).toBe(403);
  });
});
