import { listen } from '@hwp/platform/test-kit';
import { collabAs, type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';
import { createPart, createPartVersion } from '#test/factories';
import { SseClient } from '#test/sse-client';

/** DECISIONS.md section 7: every part change is one `part` event on the workspace's stream. */
let stack: Stack;
let server: Awaited<ReturnType<typeof listen>>;
const clients: SseClient[] = [];

beforeAll(async () => {
  stack = await startStack();
  server = await listen(stack.collab.app);
}, 60_000);
afterAll(async () => {
  for (const client of clients) client.close();
  await server?.close();
  await stack?.stop();
});

async function watch(t: Team): Promise<SseClient> {
  const client = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.viewer.token);
  expect(client.status).toBe(200);
  clients.push(client);
  return client;
}

describe('part events', () => {
  test('each part change is exactly one part event, seen by another member', async () => {
    const t = await teamWorkspace(stack, 'part-events');
    const stream = await watch(t);
    const app = stack.collab.app;
    const q = { workspace: t.workspace };

    const part = await createPart(app, t.engineer, t.workspace, { name: 'Bracket' });
    await collabAs(app, t.engineer)
      .patch(`/v1/parts/${part.id}`)
      .query(q)
      .send({ description: 'Steel' })
      .expect(200);
    // A PATCH that changes nothing is no change: no event.
    await collabAs(app, t.engineer)
      .patch(`/v1/parts/${part.id}`)
      .query(q)
      .send({ description: 'Steel' })
      .expect(200);
    await collabAs(app, t.manager)
      .patch(`/v1/parts/${part.id}`)
      .query(q)
      .send({ lifecycle: 'released', name: 'Bracket B' })
      .expect(200);
    await createPartVersion(app, t.engineer, t.workspace, part.id, {
      status: 'approved',
      reviewer: t.manager,
    });
    const csv = Buffer.from(`part_number,name\nPE-1,Imported one\nPE-2,Imported two\n`);
    await collabAs(app, t.engineer)
      .post('/v1/parts/import')
      .field('workspace', t.workspace)
      .attach('file', csv, { filename: 'parts.csv', contentType: 'text/csv' })
      .expect(200);

    const expected = [
      'created',
      'updated',
      'lifecycle',
      'version.created',
      'version.submitted',
      'version.approved',
    ];
    await stream.waitFor((e) => e.type === 'part' && e.data.action === 'imported');
    const events = stream.of('part');
    expect(events.map((e) => e.data.action)).toEqual([...expected, 'imported']);
    expect(events[0]).toMatchObject({
      actor: expect.any(String),
      data: { partId: part.id, partNumber: part.partNumber, name: 'Bracket', lifecycle: 'prototype' },
    });
    expect(events[1].data).toMatchObject({
      partId: part.id,
      changes: { description: { from: '', to: 'Steel' } },
    });
    expect(events[2].data).toMatchObject({
      lifecycle: 'released',
      previous: 'prototype',
      changes: { name: { from: 'Bracket', to: 'Bracket B' } },
    });
    expect(events[6].data).toMatchObject({ created: 2, updated: 0 });
  });
});
