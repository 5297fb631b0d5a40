import { as, signUp, type TestUser } from '@hwp/platform/test-kit';
import request from 'supertest';
import {
  type CrossHostStack,
  collabAs,
  startCrossHostStack,
  type Team,
  teamWorkspace,
} from '#collab-test/collab-test-kit';

let stack: CrossHostStack;
let team: Team;
let apiUser: TestUser;

beforeAll(async () => {
  stack = await startCrossHostStack();
  [team, apiUser] = await Promise.all([teamWorkspace(stack, 'ids'), signUp(stack.api.app)]);
}, 60_000);
afterAll(() => stack?.stop());

function expectNotFound(res: request.Response, detail: string): void {
  expect([res.status, res.body.code, res.body.detail]).toEqual([404, 'not_found', detail]);
}

describe('an id in the path that is not a UUID', () => {
  it('answers 404 on the collaboration host, for the part and for its version', async () => {
    const viewer = collabAs(stack.collab.app, team.viewer);
    expectNotFound(
      await viewer.get('/v1/parts/not-a-uuid').query({ workspace: team.workspace }),
      'Part not found',
    );

    const created = await collabAs(stack.collab.app, team.engineer)
      .post('/v1/parts')
      .send({ workspace: team.workspace, partNumber: 'IDS-1', name: 'Bracket' })
      .expect(201);
    const versions = `/v1/parts/${created.body.id}/versions`;
    const engineer = collabAs(stack.collab.app, team.engineer);
    expectNotFound(
      await engineer.post(`${versions}/1/submit`).query({ workspace: team.workspace }).send({}),
      'Version not found',
    );
    // An upper-case UUID is still a UUID: it reaches the route (and finds the part).
    await viewer
      .get(`/v1/parts/${created.body.id.toUpperCase()}`)
      .query({ workspace: team.workspace })
      .expect(200);
  });

  it('answers 404 on the API host, after authentication', async () => {
    expectNotFound(await as(stack.api.app, apiUser).get('/tenant/not-a-uuid'), 'Tenant not found');
    const [tenant] = (await as(stack.api.app, apiUser).get('/tenants').expect(200)).body.items;
    expectNotFound(
      await as(stack.api.app, apiUser).delete(`/tenant/${tenant.id}/members/12345`),
      'User not found',
    );
    // Without a credential the answer is still 401: the id check comes after authentication.
    expect((await request(stack.api.app).get('/tenant/not-a-uuid')).status).toBe(401);
  });

  it('is documented as a uuid parameter with its 404 answer', async () => {
    const collabDoc = (await request(stack.collab.app).get('/openapi.json').expect(200)).body;
    const part = collabDoc.paths['/v1/parts/{id}'].get;
    expect(part.parameters).toEqual(
      expect.arrayContaining([
        { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
      ]),
    );
    expect(part.responses['404']).toBeDefined();
    const workspace = collabDoc.paths['/v1/workspaces/{name}'].get;
    expect(workspace.parameters).toEqual(
      expect.arrayContaining([{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }]),
    );
    const apiDoc = (await request(stack.api.app).get('/openapi.json').expect(200)).body;
    const members = apiDoc.paths['/tenant/{tenant_id}/members/{user_id}'].delete;
    expect(members.parameters.map((p: { schema: { format?: string } }) => p.schema.format)).toEqual([
      'uuid',
      'uuid',
    ]);
  });
});

describe('a required field that is missing', () => {
  it('answers 400 with the one message "is required" for it, and every rule for a wrong one', async () => {
    const res = await collabAs(stack.collab.app, team.engineer)
      .post('/v1/parts')
      .send({ workspace: team.workspace })
      .expect(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([{ field: 'name', message: 'is required' }]);

    const wrong = await collabAs(stack.collab.app, team.engineer)
      .post('/v1/parts')
      .send({ workspace: team.workspace, name: 5 })
      .expect(400);
    // One message for the field: the kind it takes (not its length rules as well, nor 'is required').
    expect(wrong.body.errors).toEqual([{ field: 'name', message: 'name must be a string' }]);
  });

  it('answers the same on the API host', async () => {
    const res = await as(stack.api.app, apiUser)
      .post('/tenant/create')
      .send({ slug: 'acme-ids' })
      .expect(400);
    expect(res.body.errors).toEqual([{ field: 'name', message: 'is required' }]);
  });
});
