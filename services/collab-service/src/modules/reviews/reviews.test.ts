import type { DesignReview, Task, WorkspaceStats } from '@hwp/contracts';
import { listen } from '@hwp/platform/test-kit';
import { mailedTo, type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';
import { SseClient } from '#test/sse-client';

let stack: Stack;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  stack = await startStack();
  server = await listen(stack.collab.app);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await stack?.stop();
});

const mailed = (workspace: string, template: string) => mailedTo(stack, workspace, template);

describe('design reviews', () => {
  let t: Team;
  let kit: ReturnType<typeof filesKit>;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'reviews');
    kit = filesKit(stack, t);
  });

  test('a review from a template: its checklist becomes tasks, the reviewer is emailed, SSE review events', async () => {
    const stream = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.viewer.token);
    const template = await kit
      .as(t.manager)
      .post('/v1/review-templates')
      .send({
        workspace: t.workspace,
        name: 'Drawing release',
        message: 'Check the drawing',
        checklist: ['Title block', 'Tolerances', 'Material callout'],
      })
      .expect(201);
    expect(template.body).toMatchObject({
      name: 'Drawing release',
      checklist: ['Title block', 'Tolerances', 'Material callout'],
    });
    await kit
      .as(t.manager)
      .post('/v1/review-templates')
      .send({ workspace: t.workspace, name: 'drawing RELEASE', checklist: [] })
      .expect(409);
    const folder = await kit.username(t.engineer);
    const upload = await kit.upload(t.engineer, folder, 'bracket.step', 'v1').expect(201);
    const path = kit.path(folder, 'bracket.step');
    const created = await kit
      .as(t.engineer)
      .post('/v1/reviews')
      .send({
        path,
        versionId: upload.body.versionId,
        reviewerEmail: t.viewer.email.toUpperCase(),
        templateId: template.body.id,
        dueAt: '2030-01-01T00:00:00.000Z',
      })
      .expect(201);
    const review = created.body as DesignReview;
    expect(review).toMatchObject({
      path,
      versionId: upload.body.versionId,
      reviewerEmail: t.viewer.email.toLowerCase(),
      message: 'Check the drawing',
      status: 'open',
      templateId: template.body.id,
      dueAt: '2030-01-01T00:00:00.000Z',
    });
    expect(review.tasks.map((x) => [x.title, x.status, x.sortIndex])).toEqual([
      ['Title block', 'open', 0],
      ['Tolerances', 'open', 1],
      ['Material callout', 'open', 2],
    ]);
    expect(await mailed(t.workspace, 'review.requested')).toEqual([t.viewer.email.toLowerCase()]);
    const listed = await kit.as(t.viewer).get('/v1/reviews').query({ path }).expect(200);
    expect(listed.body.items).toEqual([review]);
    await stream.waitFor((e) => e.type === 'review' && (e.data as { action: string }).action === 'created');
    stream.close();
    // A template in another workspace is not found; a stranger is no reviewer; an unknown version is 404.
    const other = await teamWorkspace(stack, 'reviews-other');
    const foreign = await filesKit(stack, other)
      .as(other.manager)
      .post('/v1/review-templates')
      .send({ workspace: other.workspace, name: 'Theirs', checklist: ['x'] })
      .expect(201);
    for (const [body, status] of [
      [{ path, reviewerEmail: t.viewer.email, templateId: foreign.body.id }, 404],
      [{ path, reviewerEmail: other.viewer.email }, 400],
      [{ path, reviewerEmail: t.viewer.email, versionId: foreign.body.id }, 404],
      [{ path, reviewerEmail: 'not-an-email' }, 400],
    ] as const) {
      const res = await kit.as(t.engineer).post('/v1/reviews').send(body);
      expect({ status: res.status, code: typeof res.body.code }).toEqual({ status, code: 'string' });
    }
  });

  test('review and review-task moves follow the machine; others 409; reopen needs a manager', async () => {
    const path = kit.path(await kit.username(t.engineer), 'housing.step');
    const review = (
      await kit.as(t.engineer).post('/v1/reviews').send({ path, reviewerEmail: t.viewer.email }).expect(201)
    ).body as DesignReview;
    const patch = (user: typeof t.viewer, status: string) =>
      kit.as(user).patch(`/v1/reviews/${review.id}`).send({ workspace: t.workspace, status });
    const bad = await patch(t.engineer, 'completed').expect(409);
    expect(bad.body).toMatchObject({ code: 'conflict', status: 'open', allowed: ['in_review', 'canceled'] });
    await patch(t.viewer, 'in_review').expect(200);
    // The reviewer (a viewer) adds a task and moves it; an engineer who is neither may not.
    const task = await kit
      .as(t.viewer)
      .post(`/v1/reviews/${review.id}/tasks`)
      .send({ workspace: t.workspace, title: 'Wall thickness' })
      .expect(201);
    await kit
      .as(t.engineer)
      .post(`/v1/reviews/${review.id}/tasks`)
      .send({ workspace: t.workspace, title: 'Mine' })
      .expect(403);
    const move = (status: string) =>
      kit
        .as(t.viewer)
        .patch(`/v1/reviews/${review.id}/tasks/${task.body.id}`)
        .send({ workspace: t.workspace, status });
    await move('done').expect(409);
    await move('in_progress').expect(200);
    await move('done').expect(200);
    await move('canceled').expect(409);
    await move('open').expect(200);
    await patch(t.viewer, 'completed').expect(200);
    await patch(t.viewer, 'in_review').expect(409);
    await patch(t.engineer, 'open').expect(403);
    const reopened = await patch(t.manager, 'open').expect(200);
    expect(reopened.body.status).toBe('open');
    // Another workspace's member cannot see it, even by id.
    const other = await teamWorkspace(stack, 'reviews-foreign');
    await kit
      .as(other.owner)
      .patch(`/v1/reviews/${review.id}`)
      .send({ workspace: other.workspace, status: 'canceled' })
      .expect(404);
  });
});

describe('tasks and stats', () => {
  let t: Team;
  let kit: ReturnType<typeof filesKit>;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'tasks');
    kit = filesKit(stack, t);
  });

  test('only creator, owner or manager patch; soft-deleted tasks vanish from lists and stats', async () => {
    const stream = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.owner.token);
    const path = kit.path(await kit.username(t.engineer), 'pcb.kicad_pcb');
    const create = (title: string, extra: Record<string, unknown> = {}) =>
      kit
        .as(t.engineer)
        .post('/v1/tasks')
        .send({ path, title, ...extra })
        .expect(201)
        .then((r) => r.body as Task);
    const a = await create('Route USB', { ownerEmail: t.manager.email, sortIndex: 10 });
    const b = await create('Check DRC');
    const c = await create('Order stencil', { sortIndex: 0 });
    expect(a.ownerEmail).toBe(t.manager.email.toLowerCase());
    expect(await mailed(t.workspace, 'task.assigned')).toEqual([t.manager.email.toLowerCase()]);
    const list = await kit.as(t.viewer).get('/v1/tasks').query({ path }).expect(200);
    expect(list.body.items.map((x: Task) => x.title)).toEqual(['Order stencil', 'Route USB', 'Check DRC']);

    const forbidden = await kit
      .as(t.viewer)
      .patch(`/v1/tasks/${b.id}`)
      .send({ workspace: t.workspace, title: 'hijacked' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('forbidden');
    await kit
      .as(t.engineer)
      .patch(`/v1/tasks/${b.id}`)
      .send({ workspace: t.workspace, ownerEmail: t.viewer.email })
      .expect(200);
    // Now the viewer owns it and may move it.
    await kit
      .as(t.viewer)
      .patch(`/v1/tasks/${b.id}`)
      .send({ workspace: t.workspace, status: 'in_progress' })
      .expect(200);
    await kit
      .as(t.viewer)
      .patch(`/v1/tasks/${b.id}`)
      .send({ workspace: t.workspace, status: 'done' })
      .expect(200);
    await kit
      .as(t.viewer)
      .patch(`/v1/tasks/${b.id}`)
      .send({ workspace: t.workspace, status: 'canceled' })
      .expect(409);
    await kit.as(t.viewer).delete(`/v1/tasks/${c.id}`).query({ workspace: t.workspace }).expect(403);
    await kit.as(t.engineer).delete(`/v1/tasks/${c.id}`).query({ workspace: t.workspace }).expect(200);
    await kit.as(t.engineer).delete(`/v1/tasks/${c.id}`).query({ workspace: t.workspace }).expect(404);
    await kit
      .as(t.engineer)
      .patch(`/v1/tasks/${c.id}`)
      .send({ workspace: t.workspace, title: 'x' })
      .expect(404);

    const after = await kit.as(t.viewer).get('/v1/tasks').query({ path }).expect(200);
    expect(after.body.items.map((x: Task) => x.title)).toEqual(['Route USB', 'Check DRC']);
    const timeline = await kit.as(t.viewer).get('/v1/timeline').query({ path, types: 'task' }).expect(200);
    expect(timeline.body.items.map((x: { type: string; text: string }) => [x.type, x.text])).toEqual([
      ['task', 'Check DRC'],
      ['task', 'Route USB'],
    ]);
    const recent = await kit
      .as(t.viewer)
      .get('/v1/workspace/tasks')
      .query({ workspace: t.workspace, status: 'all' });
    expect(recent.body.items.map((x: Task) => x.id).sort()).toEqual([a.id, b.id].sort());
    const stats = (
      await kit.as(t.viewer).get('/v1/workspace/stats').query({ workspace: t.workspace }).expect(200)
    ).body as WorkspaceStats;
    expect(stats.tasks).toMatchObject({ total: 2, open: 1, done: 1 });
    await stream.waitFor((e) => e.type === 'task' && (e.data as { action: string }).action === 'deleted');
    expect(stream.of('task').map((e) => (e.data as { action: string }).action)).toEqual([
      'created',
      'created',
      'created',
      'updated',
      'updated',
      'updated',
      'deleted',
    ]);
    stream.close();
  });

  test('stats and the newest lists equal what the test made', async () => {
    const w = await teamWorkspace(stack, 'stats');
    const wk = filesKit(stack, w);
    const folder = await wk.username(w.engineer);
    const past = '2020-01-01T00:00:00.000Z';
    const future = '2099-01-01T00:00:00.000Z';
    const taskPlan = [
      { status: 'open', dueAt: past },
      { status: 'open', dueAt: future },
      { status: 'open' },
      { status: 'in_progress', dueAt: past },
      { status: 'done', dueAt: past },
      { status: 'canceled', dueAt: past },
      { status: 'in_progress' },
    ];
    const tasks: Task[] = [];
    for (const [i, plan] of taskPlan.entries()) {
      tasks.push(
        (
          await wk
            .as(w.engineer)
            .post('/v1/tasks')
            .send({ path: wk.path(folder, `f${i % 3}.step`), title: `t${i}`, ...plan })
            .expect(201)
        ).body,
      );
    }
    const reviewPlan: { to: string[]; dueAt?: string }[] = [
      { to: [], dueAt: past },
      { to: ['in_review'], dueAt: past },
      { to: ['in_review', 'completed'], dueAt: past },
      { to: ['canceled'] },
      { to: [] },
    ];
    const reviews: DesignReview[] = [];
    for (const [i, plan] of reviewPlan.entries()) {
      const r = await wk
        .as(w.engineer)
        .post('/v1/reviews')
        .send({ path: wk.path(folder, `r${i}.step`), reviewerEmail: w.viewer.email, dueAt: plan.dueAt })
        .expect(201);
      await wk
        .as(w.viewer)
        .post(`/v1/reviews/${r.body.id}/tasks`)
        .send({ workspace: w.workspace, title: 'look' })
        .expect(201);
      let last = r.body as DesignReview;
      for (const status of plan.to)
        last = (
          await wk
            .as(w.viewer)
            .patch(`/v1/reviews/${r.body.id}`)
            .send({ workspace: w.workspace, status })
            .expect(200)
        ).body;
      reviews.push(last);
    }
    const countBy = <T extends { status: string }>(items: T[]) =>
      items.reduce<Record<string, number>>((acc, x) => {
        acc[x.status] = (acc[x.status] ?? 0) + 1;
        return acc;
      }, {});
    const finished = ['done', 'completed', 'canceled'];
    const overdue = (items: { status: string; dueAt: string | null }[]) =>
      items.filter((x) => x.dueAt && x.dueAt < new Date().toISOString() && !finished.includes(x.status))
        .length;

    const stats = (
      await wk.as(w.viewer).get('/v1/workspace/stats').query({ workspace: w.workspace }).expect(200)
    ).body as WorkspaceStats;
    expect(stats.tasks).toMatchObject({ ...countBy(tasks), total: tasks.length, overdue: overdue(tasks) });
    expect(stats.reviews).toMatchObject({
      ...countBy(reviews),
      total: reviews.length,
      overdue: overdue(reviews),
    });
    expect(stats.reviewTasks).toMatchObject({ open: reviews.length, total: reviews.length });
    expect(stats.tasks.overdue).toBe(2);
    expect(stats.reviews.overdue).toBe(2);

    const newestTasks = await wk
      .as(w.viewer)
      .get('/v1/workspace/tasks')
      .query({ workspace: w.workspace, status: 'open', limit: 2 })
      .expect(200);
    expect(newestTasks.body.items.map((x: Task) => x.title)).toEqual(['t2', 't1']);
    const allReviews = await wk
      .as(w.viewer)
      .get('/v1/workspace/reviews')
      .query({ workspace: w.workspace, status: 'all', limit: 50 })
      .expect(200);
    expect(allReviews.body.items.map((x: DesignReview) => x.id)).toEqual(reviews.map((r) => r.id).reverse());
    expect(allReviews.body.items[0].tasks).toHaveLength(1);
    const inReview = await wk
      .as(w.viewer)
      .get('/v1/workspace/reviews')
      .query({ workspace: w.workspace, status: 'in_review' })
      .expect(200);
    expect(inReview.body.items.map((x: DesignReview) => x.id)).toEqual([reviews[1].id]);
    await wk
      .as(w.viewer)
      .get('/v1/workspace/reviews')
      .query({ workspace: w.workspace, status: 'bogus' })
      .expect(400);
    await wk
      .as(w.viewer)
      .get('/v1/workspace/tasks')
      .query({ workspace: w.workspace, limit: 100000 })
      .expect(400);
  });
});
