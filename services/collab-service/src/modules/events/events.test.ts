import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CollabEvent, CollabEventType } from '@hwp/contracts';
import { expectEventually } from '@hwp/platform/test-kit';
import {
  type CollabTestService,
  collabAs,
  newUser,
  type Stack,
  startStack,
  type TestUser,
} from '../../../test/support/collab-test-kit';
import { SseClient } from '../../../test/support/sse-client';
import { collabService } from '../../service';
import { EventLogRepository } from './event-log.repository';
import type { EventsModule } from './events.module';

const eventsModuleFor = (deps: Parameters<typeof collabService.exportsOf>[0]) =>
  collabService.exportsOf<EventsModule>(deps, 'events');

let stack: Stack;
let base: string;
const servers: Server[] = [];
const clients: SseClient[] = [];

async function listen(service: CollabTestService): Promise<string> {
  const server = createServer(service.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  stack = await startStack({ collab: { SSE_MAX_CONNECTIONS_PER_USER: '3' } });
  base = await listen(stack.collab);
}, 60_000);

afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await stack?.stop();
});

async function open(user: TestUser, query: string, headers: Record<string, string> = {}, at = base) {
  const client = await SseClient.open(at, `/v1/events?${query}`, user.token, headers);
  clients.push(client);
  return client;
}

interface Member {
  user: TestUser;
  id: string;
  username: string;
}

async function member(): Promise<Member> {
  const user = await newUser(stack);
  const session = await collabAs(stack.collab.app, user).get('/api/session').expect(200);
  return { user, id: session.body.user.id, username: session.body.user.username };
}

/** A workspace owned by a new user, with further members at the given roles. */
async function workspace(...roles: ('viewer' | 'engineer' | 'manager')[]) {
  const owner = await member();
  const name = `ev-${randomBytes(4).toString('hex')}`;
  const created = await collabAs(stack.collab.app, owner.user)
    .post('/v1/workspaces')
    .send({ name })
    .expect(201);
  const ws = { id: created.body.id as string, name };
  const others: Member[] = [];
  for (const role of roles) {
    const m = await member();
    await stack.collab.deps.dataSource.query(
      'INSERT INTO workspace_members (workspace_id, user_id, role, joined_at) VALUES ($1, $2, $3, now())',
      [ws.id, m.id, role],
    );
    others.push(m);
  }
  return { ws, owner, others };
}

function emit(
  ws: { id: string; name: string },
  actor: Member,
  data: Record<string, unknown>,
  options: { to?: Member; type?: CollabEventType; path?: string } = {},
): Promise<CollabEvent> {
  const { events } = eventsModuleFor(stack.collab.deps);
  return stack.collab.deps.bus.transaction((manager) =>
    events.emit(manager, ws, options.type ?? 'comment', data, {
      actor,
      path: options.path,
      to: options.to,
    }),
  );
}

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
    expect(removed.data).toEqual({ kind: 'member', username: engineer.username, role: null });
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
    // Logged without an outbox row: as if its message had been lost on the way.
    const log = new EventLogRepository();
    const lost = await stack.collab.deps.dataSource.transaction(async (manager) => {
      const id = await log.nextId(manager, ws.id);
      const event: CollabEvent = {
        id,
        type: 'comment',
        workspace: ws.name,
        actor: owner.username,
        at: new Date().toISOString(),
        data: { lost: true },
      };
      await log.append(manager, { workspaceId: ws.id, recipientId: null, event });
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

  test('presence: online on the first stream, offline after the last, and GET /v1/users follows', async () => {
    const { ws, owner, others } = await workspace('engineer');
    const [engineer] = others;
    const watcher = await open(owner.user, `workspace=${ws.name}`);
    const users = async () => {
      const res = await collabAs(stack.collab.app, owner.user)
        .get(`/v1/users?workspace=${ws.name}`)
        .expect(200);
      return res.body.items.find((u: { id: string }) => u.id === engineer.id)?.online;
    };
    expect(await users()).toBe(false);

    const first = await open(engineer.user, `workspace=${ws.name}`);
    const second = await open(engineer.user, `workspace=${ws.name}`);
    const isEngineer = (online: boolean) => (e: CollabEvent) =>
      e.type === 'presence' && e.data.username === engineer.username && e.data.online === online;
    const online = await watcher.waitFor(isEngineer(true));
    expect(online).toMatchObject({
      actor: engineer.username,
      data: { username: engineer.username, online: true },
    });
    await expectEventually(async () => expect(await users()).toBe(true));

    first.close();
    const marker = await emit(ws, owner, { marker: true });
    await watcher.waitFor((e) => e.id === marker.id);
    expect(watcher.events.filter(isEngineer(false))).toEqual([]);
    expect(await users()).toBe(true);

    second.close();
    await watcher.waitFor(isEngineer(false));
    await expectEventually(async () => expect(await users()).toBe(false));
    expect(watcher.events.filter(isEngineer(true))).toHaveLength(1);
  });

  test('refresh writes the connection count and brings back a row that vanished', async () => {
    const { ws, owner } = await workspace();
    await open(owner.user, `workspace=${ws.name}`);
    await open(owner.user, `workspace=${ws.name}`);
    const presence = eventsModuleFor(stack.collab.deps).presence;
    const row = () =>
      stack.collab.deps.dataSource.query(
        'SELECT connections FROM collab_presence WHERE workspace_id = $1 AND user_id = $2',
        [ws.id, owner.id],
      );
    // The row is written once, by the first stream; a refresh writes the count of both.
    await expectEventually(async () => {
      await presence.refresh();
      expect(await row()).toEqual([{ connections: 2 }]);
    });

    await stack.collab.deps.dataSource.query('DELETE FROM collab_presence WHERE workspace_id = $1', [ws.id]);
    await presence.refresh();
    await expectEventually(async () => expect(await row()).toEqual([{ connections: 2 }]));
    expect((await presence.onlineUserIds(ws.id)).has(owner.id)).toBe(true);
  });

  test('a replica that stopped refreshing is swept and its users go offline', async () => {
    const { ws, owner, others } = await workspace('engineer');
    const [engineer] = others;
    const watcher = await open(owner.user, `workspace=${ws.name}`);
    await expectEventually(() => expect(watcher.retry).not.toBeNull());
    await stack.collab.deps.dataSource.query(
      `INSERT INTO collab_presence (workspace_id, user_id, replica_id, connections, seen_at)
       VALUES ($1, $2, 'dead-replica', 1, now() - interval '5 minutes')`,
      [ws.id, engineer.id],
    );
    const online = await eventsModuleFor(stack.collab.deps).presence.onlineUserIds(ws.id);
    expect(online.has(engineer.id)).toBe(false);
    await eventsModuleFor(stack.collab.deps).housekeeping();
    await watcher.waitFor(
      (e) => e.type === 'presence' && e.data.username === engineer.username && !e.data.online,
    );
    const rows = await stack.collab.deps.dataSource.query(
      'SELECT 1 FROM collab_presence WHERE user_id = $1',
      [engineer.id],
    );
    expect(rows).toEqual([]);
  });
});

describe('GET /v1/events across replicas', () => {
  test('an event emitted through one process reaches a client connected to another', async () => {
    // A long heartbeat: the periodic catch-up from the log cannot stand in for the broker here.
    const replica = await stack.startCollabReplica({ SSE_HEARTBEAT_MS: '60000' });
    const replicaBase = await listen(replica);
    const { ws, owner, others } = await workspace('engineer');
    const [engineer] = others;
    const onReplica = await open(engineer.user, `workspace=${ws.name}`, {}, replicaBase);
    expect(onReplica.status).toBe(200);

    // Presence written by the replica is what the first process reports.
    await expectEventually(async () => {
      const res = await collabAs(stack.collab.app, owner.user)
        .get(`/v1/users?workspace=${ws.name}`)
        .expect(200);
      expect(res.body.items.find((u: { id: string }) => u.id === engineer.id)?.online).toBe(true);
    });

    await collabAs(stack.collab.app, owner.user)
      .patch(`/v1/workspaces/${ws.name}/members/${engineer.username}`)
      .send({ role: 'viewer' })
      .expect(200);
    const got = await onReplica.waitFor((e) => e.type === 'update');
    expect(got.data).toEqual({ kind: 'member', username: engineer.username, role: 'viewer' });

    // And the other way round: emitted on the replica, seen on the first process.
    const onFirst = await open(owner.user, `workspace=${ws.name}`);
    await expectEventually(() => expect(onFirst.retry).not.toBeNull());
    const fromReplica = await replica.deps.bus.transaction((manager) =>
      eventsModuleFor(replica.deps).events.emit(
        manager,
        ws,
        'task',
        { from: 'replica' },
        { actor: 'system' },
      ),
    );
    const seen = await onFirst.waitFor((e) => e.id === fromReplica.id);
    expect(seen).toMatchObject({ type: 'task', actor: 'system', data: { from: 'replica' } });
  });

  test('sends a heartbeat comment every SSE_HEARTBEAT_MS and ends streams on shutdown', async () => {
    const replica = await stack.startCollabReplica({ SSE_HEARTBEAT_MS: '200' });
    const replicaBase = await listen(replica);
    const { ws, owner } = await workspace();
    const client = await open(owner.user, `workspace=${ws.name}`, {}, replicaBase);
    // Generous for a busy machine, and still short of the two default intervals (2 x 15 s) that
    // two heartbeats would take if the setting were ignored.
    await expectEventually(
      () => expect(client.comments.filter((c) => c === 'heartbeat').length).toBeGreaterThan(1),
      { timeoutMs: 20_000 },
    );
    await replica.deps.lifecycle.shutdown();
    await expectEventually(() => expect(client.ended).toBe(true), { timeoutMs: 15_000 });
  });
});
