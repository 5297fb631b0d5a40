import { listen } from '@hwp/platform/test-kit';
import { mailedTo, type Stack, startStack, teamWorkspace } from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';
import { SseClient } from '#test/sse-client';
import { collabService } from '../../service';
import type { ReviewsExports } from './reviews.feature';

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

describe('due-soon notices', () => {
  test('several replicas scanning at once send one notice per item; a new due date sends another', async () => {
    const t = await teamWorkspace(stack, 'due');
    const kit = filesKit(stack, t);
    const stream = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.owner.token);
    const path = kit.path(await kit.username(t.engineer), 'gearbox.step');
    const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
    const soon = await kit
      .as(t.engineer)
      .post('/v1/tasks')
      .send({ path, title: 'Backlash check', ownerEmail: t.viewer.email, dueAt: inHours(2) })
      .expect(201);
    await kit
      .as(t.engineer)
      .post('/v1/tasks')
      .send({ path, title: 'Later', dueAt: inHours(24 * 7) })
      .expect(201);
    await kit
      .as(t.engineer)
      .post('/v1/tasks')
      .send({ path, title: 'Done', dueAt: inHours(1), status: 'done' })
      .expect(201);
    await kit
      .as(t.engineer)
      .post('/v1/tasks')
      .send({ path, title: 'Mine', dueAt: inHours(3) })
      .expect(201);
    await kit
      .as(t.engineer)
      .post('/v1/reviews')
      .send({ path, reviewerEmail: t.manager.email, dueAt: inHours(5) })
      .expect(201);

    const { dueSoon } = collabService.exportsOf<ReviewsExports>(stack.collab.deps, 'reviews');
    const scans = await Promise.all(Array.from({ length: 6 }, () => dueSoon.scan()));
    const sent = scans.filter((s) => s !== null);
    // Other test files' workspaces are in other databases: only this file's items count.
    expect(sent.reduce((n, s) => n + (s?.tasks ?? 0), 0)).toBe(2);
    expect(sent.reduce((n, s) => n + (s?.reviews ?? 0), 0)).toBe(1);
    expect(await dueSoon.scan()).toEqual({ reviews: 0, tasks: 0 });
    expect((await mailed(t.workspace, 'task.due_soon')).sort()).toEqual(
      [t.viewer.email.toLowerCase(), t.engineer.email.toLowerCase()].sort(),
    );
    expect(await mailed(t.workspace, 'review.due_soon')).toEqual([t.manager.email.toLowerCase()]);
    await stream.waitFor((e) => e.type === 'review' && (e.data as { action: string }).action === 'due_soon');
    await stream.waitFor((e) => e.type === 'task' && (e.data as { taskId?: string }).taskId === soon.body.id);

    await kit
      .as(t.viewer)
      .patch(`/v1/tasks/${soon.body.id}`)
      .send({ workspace: t.workspace, dueAt: inHours(4) })
      .expect(200);
    expect(await dueSoon.scan()).toEqual({ reviews: 0, tasks: 1 });
    expect(await mailed(t.workspace, 'task.due_soon')).toHaveLength(3);
    stream.close();
  });
});
