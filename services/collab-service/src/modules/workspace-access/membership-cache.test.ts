import { expectEventually, listen } from '@hwp/platform/test-kit';
import request from 'supertest';
import { collabAs, type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

/** Memberships are reused between requests: a removal or a demotion must still take effect at once. */
describe('membership changes take effect at once', () => {
  let t: Team;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'cache');
  });

  test('removed on this process: the next request is 404; demoted: the next write is 403', async () => {
    const kit = filesKit(stack, t);
    const as = (u: typeof t.viewer) => collabAs(stack.collab.app, u);
    await as(t.engineer).get(`/v1/workspaces/${t.workspace}`).expect(200);
    await as(t.viewer).get(`/v1/workspaces/${t.workspace}`).expect(200);
    const engineer = await kit.username(t.engineer);
    const viewer = await kit.username(t.viewer);
    await as(t.owner)
      .patch(`/v1/workspaces/${t.workspace}/members/${engineer}`)
      .send({ role: 'viewer' })
      .expect(200);
    await as(t.engineer)
      .post('/v1/tasks')
      .send({ path: kit.path(engineer, 'a.step'), title: 'x' })
      .expect(403);
    await as(t.owner).delete(`/v1/workspaces/${t.workspace}/members/${viewer}`).expect(204);
    await as(t.viewer).get(`/v1/workspaces/${t.workspace}`).expect(404);
  });

  test('removed through another replica: this process answers 404 as soon as the event arrives', async () => {
    const replica = await stack.startCollabReplica();
    const onReplica = await listen(replica.app);
    try {
      const kit = filesKit(stack, t);
      await collabAs(stack.collab.app, t.manager).get(`/v1/workspaces/${t.workspace}`).expect(200);
      const manager = await kit.username(t.manager);
      await request(onReplica.url)
        .delete(`/v1/workspaces/${t.workspace}/members/${manager}`)
        .set('Authorization', `Bearer ${t.owner.token}`)
        .expect(204);
      await expectEventually(
        async () => {
          const res = await collabAs(stack.collab.app, t.manager).get(`/v1/workspaces/${t.workspace}`);
          expect(res.status).toBe(404);
        },
        { timeoutMs: 5_000 },
      );
    } finally {
      await onReplica.close();
    }
  });
});
