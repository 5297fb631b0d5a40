import { type CollabEvent, RoutingKeys } from '@hwp/contracts';
import { buildEnvelope } from '@hwp/platform';
import { expectEventually } from '@hwp/platform/test-kit';
import { collabAs, type Stack } from '#test/collab-test-kit';
import { useEventsStack } from '#test/events-kit';
import { EventLogRepository } from './event-log.repository';

let stack: Stack;
const { open, member, workspace, emit } = useEventsStack((started) => {
  stack = started;
});

/** Ids of the events in `(after, upTo]` that `userId` may see, as the log has them. */
async function loggedIds(wsId: string, userId: string, after: number, upTo: number): Promise<number[]> {
  const rows: { id: string }[] = await stack.collab.deps.dataSource.query(
    `SELECT id FROM collab_events WHERE workspace_id = $1 AND id > $2 AND id <= $4
     AND (recipient_id IS NULL OR recipient_id = $3) ORDER BY id`,
    [wsId, after, userId, upTo],
  );
  return rows.map((r) => Number(r.id));
}

describe('GET /v1/events', () => {
  test('streams text/event-stream unbuffered, starting with retry:, and carries events of other requests', async () => {
    const { ws, owner, others } = await workspace('engineer');
    const client = await open(owner.user, `workspace=${ws.name}`);
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(client.headers['x-accel-buffering']).toBe('no');
    expect(client.headers['cache-control']).toBe('no-cache, no-transform');
    expect(client.headers['content-encoding']).toBeUndefined();
    await expectEventually(() => expect(client.retry).toBe(3000));

    // Another request (a role change) emits an `update` event.
    const [engineer] = others;
    await collabAs(stack.collab.app, owner.user)
      .patch(`/v1/workspaces/${ws.name}/members/${engineer.username}`)
      .send({ role: 'manager' })
      .expect(200);
    const update = await client.waitFor((e) => e.type === 'update');
    expect(update).toMatchObject({
      type: 'update',
      workspace: ws.name,
      actor: owner.username,
      data: { kind: 'member', username: engineer.username, role: 'manager' },
    });
    expect(update.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(client.ids).toEqual(client.events.map((e) => e.id));

    await collabAs(stack.collab.app, owner.user)
      .delete(`/v1/workspaces/${ws.name}/members/${engineer.username}`)
      .expect(204);
    const removed = await client.waitFor((e) => e.type === 'update' && e.data.role === null);
    expect(removed.data).toEqual({
      kind: 'member',
      username: engineer.username,
      userId: engineer.id,
      role: null,
    });
    expect(removed.id).toBeGreaterThan(update.id);
  });

  test('after a reconnect with Last-Event-ID a client gets exactly the events it missed, in order, once', async () => {
    const { ws, owner, others } = await workspace('engineer');
    const [other] = others;
    const first = await open(owner.user, `workspace=${ws.name}`);
    const seen = await emit(ws, owner, { n: 0 });
    await first.waitFor((e) => e.id === seen.id);
    first.close();

    const missed = [];
    for (let n = 1; n <= 3; n++) missed.push(await emit(ws, owner, { n }));
    const forOther = await emit(ws, owner, { n: 'private' }, { to: other, type: 'mention' });
    missed.push(await emit(ws, owner, { n: 4 }));

    // Events keep coming while the client reconnects: replay and live hand-off must meet exactly.
    const during = Promise.all(Array.from({ length: 20 }, (_, n) => emit(ws, owner, { during: n })));
    const again = await open(owner.user, `workspace=${ws.name}`, { 'Last-Event-ID': String(seen.id) });
    const sentDuring = await during;
    const last = await emit(ws, owner, { n: 'last' });
    await again.waitFor((e) => e.id === last.id);

    // Its own presence event may follow `last`; everything up to `last` has arrived by now.
    const ids = again.events.map((e) => e.id).filter((id) => id <= last.id);
    expect(ids).toEqual(await loggedIds(ws.id, owner.id, seen.id, last.id));
    expect(new Set(again.ids).size).toBe(again.ids.length);
    expect(ids).not.toContain(forOther.id);
    for (const event of [...missed, ...sentDuring]) expect(ids).toContain(event.id);
    expect(again.events.filter((e) => e.type === 'comment').map((e) => e.data.n)).toEqual([
      1,
      2,
      3,
      4,
      ...sentDuring.map(() => undefined),
      'last',
    ]);
  });

  test('lastEventId in the query replays like the header; the header wins when both are sent', async () => {
    const { ws, owner } = await workspace();
    const a = await emit(ws, owner, { n: 'a' });
    const b = await emit(ws, owner, { n: 'b' });
    const byQuery = await open(owner.user, `workspace=${ws.name}&lastEventId=${a.id}`);
    await byQuery.waitFor((e) => e.id === b.id);
    expect(byQuery.events[0].id).toBe(b.id);

    const both = await open(owner.user, `workspace=${ws.name}&lastEventId=0`, {
      'Last-Event-ID': String(a.id),
    });
    await both.waitFor((e) => e.id === b.id);
    expect(both.events.map((e) => e.id)).not.toContain(a.id);

    const bad = await open(owner.user, `workspace=${ws.name}&lastEventId=abc`);
    expect(bad.status).toBe(400);
  });

  test('fills a gap from the log when an event never came through the broker', async () => {
    const { ws, owner } = await workspace();
    const client = await open(owner.user, `workspace=${ws.name}`);
    await expectEventually(() => expect(client.retry).not.toBeNull());
    // Logged, its outbox row dropped: as if its message had been lost on the way.
    const log = new EventLogRepository();
    const lost = await stack.collab.deps.dataSource.transaction(async (manager) => {
      const event: CollabEvent = {
        id: 0,
        type: 'comment',
        workspace: ws.name,
        actor: owner.username,
        at: new Date().toISOString(),
        data: { lost: true },
      };
      const envelope = buildEnvelope({
        type: RoutingKeys.collabEvent,
        actor: owner.user.user.id,
        data: { workspaceId: ws.id, event },
      });
      event.id = await log.append(manager, { workspaceId: ws.id, recipientId: null, event }, envelope);
      await manager.query('DELETE FROM outbox WHERE id = $1', [envelope.id]);
      return event;
    });
    const next = await emit(ws, owner, { lost: false });
    await client.waitFor((e) => e.id === next.id);
    const comments = client.of('comment').map((e) => e.id);
    expect(comments).toEqual([lost.id, next.id]);
  });

  test('a non-member gets 404, a viewer gets events, username must be the caller’s', async () => {
    const { ws, owner, others } = await workspace('viewer');
    const [viewer] = others;
    const stranger = await member();

    const denied = await open(stranger.user, `workspace=${ws.name}`);
    expect(denied.status).toBe(404);
    expect(JSON.parse(denied.body)).toMatchObject({ code: 'not_found', path: '/v1/events' });

    const wrongName = await open(viewer.user, `workspace=${ws.name}&username=${owner.username}`);
    expect(wrongName.status).toBe(403);
    expect(JSON.parse(wrongName.body)).toMatchObject({ code: 'forbidden' });

    const missing = await open(viewer.user, 'username=x');
    expect(missing.status).toBe(400);

    const watching = await open(viewer.user, `workspace=${ws.name}&username=${viewer.username}`);
    expect(watching.status).toBe(200);
    const event = await emit(
      ws,
      owner,
      { hello: 'viewers' },
      { path: `${ws.name}/${owner.username}/a.step` },
    );
    const got = await watching.waitFor((e) => e.id === event.id);
    expect(got).toEqual({ ...event });
    expect(got.path).toBe(`${ws.name}/${owner.username}/a.step`);
  });

  test('an event addressed to one user reaches only that user’s streams', async () => {
    const { ws, owner, others } = await workspace('engineer', 'engineer');
    const [target, bystander] = others;
    const streams = {
      target: [
        await open(target.user, `workspace=${ws.name}`),
        await open(target.user, `workspace=${ws.name}`),
      ],
      bystander: await open(bystander.user, `workspace=${ws.name}`),
      owner: await open(owner.user, `workspace=${ws.name}`),
    };
    await expectEventually(() => expect(streams.owner.retry).not.toBeNull());
    const request = await emit(ws, owner, { path: 'x' }, { to: target, type: 'lock.request' });
    const after = await emit(ws, owner, { everyone: true });
    for (const stream of streams.target) {
      const got = await stream.waitFor((e) => e.id === request.id);
      expect(got.to).toBe(target.username);
    }
    for (const stream of [streams.bystander, streams.owner]) {
      await stream.waitFor((e) => e.id === after.id);
      expect(stream.events.map((e) => e.id)).not.toContain(request.id);
    }
  });

  test('caps the open streams per user: the next one gets 429 with the error body', async () => {
    const { ws, owner } = await workspace();
    const open3 = [];
    for (let i = 0; i < 3; i++) open3.push(await open(owner.user, `workspace=${ws.name}`));
    expect(open3.map((c) => c.status)).toEqual([200, 200, 200]);
    const refused = await open(owner.user, `workspace=${ws.name}`);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'rate_limited', path: '/v1/events' });

    open3[0].close();
    await expectEventually(async () => {
      const next = await open(owner.user, `workspace=${ws.name}`);
      if (next.status !== 200) next.close();
      expect(next.status).toBe(200);
    });
  });
});
