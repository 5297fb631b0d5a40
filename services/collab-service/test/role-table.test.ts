import { WORKSPACE_ROLES, type WorkspaceRole } from '@hwp/contracts';
import { anonymous } from '@hwp/platform/test-kit';
import request from 'supertest';
import { addMembers, collabAs, newUser, type Stack, startStack, type TestUser } from '#test/collab-test-kit';
import { createWorkspace } from '#test/factories';
import { owners, SAMPLES, sampleStack } from '#test/role-samples';
import { ROLE_RANK } from '../src/modules/workspace-access/workspace-access';

/**
 * The route-by-role table: every operation the OpenAPI document marks with `x-required-role` is
 * called by a viewer, an engineer, a manager and an owner of a workspace, by a signed-in
 * non-member and anonymously. Below the role: 403; at or above: 2xx; non-member: 404; no
 * credential: 401. A role-gated operation without a sample (support/role-samples.ts) fails the test:
 * add one.
 */

interface Member {
  user: TestUser;
  username: string;
}

interface RoleSet {
  workspace: string;
  byRole: Record<WorkspaceRole, Member>;
  target: Member;
}

let stack: Stack;
let operations: { key: string; role: WorkspaceRole }[];

beforeAll(async () => {
  // The table calls the upload routes more often than the per-workspace limit allows in a minute.
  stack = await startStack({
    // The table asks for many translations as one owner: the per-user queue is not what it tests.
    collab: {
      UPLOADS_PER_MINUTE: '10000',
      RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '10000',
      TRANSLATION_QUEUE_PER_USER: '1000',
    },
  });
  sampleStack(stack);
  const doc = (await request(stack.collab.app).get('/openapi.json').expect(200)).body as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, op]) =>
      op['x-required-role']
        ? [{ key: `${method.toUpperCase()} ${path}`, role: op['x-required-role'] as WorkspaceRole }]
        : [],
    ),
  );
}, 60_000);
afterAll(() => stack?.stop());

/** A signed-up user, known to the collaboration host, with their username. */
async function collabUser(): Promise<Member> {
  const user = await newUser(stack);
  const init = await collabAs(stack.collab.app, user).post('/v1/users/init').send({}).expect(200);
  return { user, username: init.body.user.username as string };
}

/** A workspace with one member per role, plus its creator (an owner) and a viewer target. */
async function roleSet(): Promise<RoleSet> {
  const [creator, target, ...members] = await Promise.all(
    ['owner', 'viewer', ...WORKSPACE_ROLES].map(() => collabUser()),
  );
  const { id, name: workspace } = await createWorkspace(stack.collab.app, creator.user, 'roles');
  owners.set(workspace, creator.user);
  const byRole = Object.fromEntries(WORKSPACE_ROLES.map((role, i) => [role, members[i]])) as Record<
    WorkspaceRole,
    Member
  >;
  // Memberships straight through the service: this test is about the role check, not about joining.
  await addMembers(stack, id, [
    [target.user, 'viewer'],
    ...WORKSPACE_ROLES.map((role): [TestUser, WorkspaceRole] => [byRole[role].user, role]),
  ]);
  return { workspace, byRole, target };
}

describe('route-by-role table', () => {
  test('every role-gated operation has a sample, and every sample a role-gated operation', () => {
    const gated = operations.map((o) => o.key);
    expect(gated.filter((key) => !SAMPLES[key])).toEqual([]);
    expect(Object.keys(SAMPLES).filter((key) => !gated.includes(key))).toEqual([]);
    expect(gated.length).toBeGreaterThan(0);
  });

  test('below the role 403, at or above 2xx, non-member 404, anonymous 401', async () => {
    const shared = await roleSet();
    const outsider = await collabUser();
    const outcomes: string[] = [];
    const record = (
      key: string,
      who: string,
      status: number,
      expected: string,
      ok: boolean,
      body: unknown,
    ) => {
      if (!ok) outcomes.push(`${key} as ${who}: ${status} (expected ${expected}) ${JSON.stringify(body)}`);
    };

    for (const { key, role: required } of operations) {
      const sample = SAMPLES[key];
      if (!sample) continue;
      const set = sample.mutates ? await roleSet() : shared;
      for (const role of WORKSPACE_ROLES) {
        const actor = set.byRole[role];
        const ctx = { workspace: set.workspace, self: actor.username, target: set.target.username };
        const res = await sample.request(collabAs(stack.collab.app, actor.user), ctx);
        if (ROLE_RANK[role] < ROLE_RANK[required]) {
          record(key, role, res.status, '403', res.status === 403 && res.body.code === 'forbidden', res.body);
        } else {
          record(key, role, res.status, '2xx', res.status >= 200 && res.status < 300, res.body);
        }
      }
      const ctx = { workspace: shared.workspace, self: outsider.username, target: shared.target.username };
      const foreign = await sample.request(collabAs(stack.collab.app, outsider.user), ctx);
      record(key, 'non-member', foreign.status, '404', foreign.status === 404, foreign.body);
      const anon = await sample.request(anonymous(stack.collab.app), {
        ...ctx,
        self: shared.target.username,
      });
      record(key, 'anonymous', anon.status, '401', anon.status === 401, anon.body);
    }
    expect(outcomes).toEqual([]);
  }, 180_000);
});
