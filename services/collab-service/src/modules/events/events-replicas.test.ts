import { expectEventually } from '@hwp/platform/test-kit';
import request from 'supertest';
import { type CrossHostStack, collabAs, startCrossHostStack } from '#test/collab-test-kit';
import { eventsModuleFor, useEventsStack } from '#test/events-kit';

let stack: CrossHostStack;
// Cross-host: a logout on the API host ends the streams on every replica.
const { listen, open, workspace } = useEventsStack((started) => {
  stack = started;
}, startCrossHostStack);

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
    expect(got.data).toEqual({
      kind: 'member',
      username: engineer.username,
      userId: engineer.id,
      role: 'viewer',
    });

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

  test('access ends streams on every replica: a removed member’s at once, a logged-out user’s too', async () => {
    // Long heartbeats and revocation re-reads: only the events can end these streams in time.
    const replica = await stack.startCollabReplica({
      SSE_HEARTBEAT_MS: '60000',
      AUTH_REVOCATIONS_REFRESH_MS: '600000',
    });
    const replicaBase = await listen(replica);
    const { ws, owner, others } = await workspace('engineer', 'viewer');
    const [removed, leaver] = others;
    const streams = [
      await open(removed.user, `workspace=${ws.name}`),
      await open(removed.user, `workspace=${ws.name}`, {}, replicaBase),
    ];
    const stays = await open(owner.user, `workspace=${ws.name}`, {}, replicaBase);
    await collabAs(stack.collab.app, owner.user)
      .delete(`/v1/workspaces/${ws.name}/members/${removed.username}`)
      .expect(204);
    await expectEventually(() => expect(streams.map((c) => c.ended)).toEqual([true, true]), {
      timeoutMs: 5_000,
    });
    // Told why before the end; the member who stays keeps the stream.
    expect(streams[1].events.at(-1)?.data).toMatchObject({ kind: 'member', userId: removed.id, role: null });
    expect(stays.ended).toBe(false);

    // A logout on the API host ends the streams opened with that session's token, on every replica.
    const leaving = [
      await open(leaver.user, `workspace=${ws.name}`),
      await open(leaver.user, `workspace=${ws.name}`, {}, replicaBase),
    ];
    await collabAs(stack.api.app, leaver.user).post('/auth/logout').expect(204);
    await expectEventually(() => expect(leaving.map((c) => c.ended)).toEqual([true, true]), {
      timeoutMs: 5_000,
    });
    expect(stays.ended).toBe(false);
  });

  test('a session cookie signed out on one replica ends the streams opened with it on every replica', async () => {
    const replica = await stack.startCollabReplica({
      // Replicas share their data folder (and so the session secret that signs the cookie).
      DATA_DIR: String(stack.collab.deps.config.DATA_DIR),
      SSE_HEARTBEAT_MS: '60000',
      AUTH_REVOCATIONS_REFRESH_MS: '600000',
    });
    const replicaBase = await listen(replica);
    const { ws, others } = await workspace('engineer');
    const [member] = others;
    const exchange = await collabAs(stack.collab.app, member.user).post('/api/auth/session').expect(200);
    const cookieOf = (name: string) =>
      (exchange.headers['set-cookie'] as unknown as string[])
        .find((c) => c.startsWith(`${name}=`))
        ?.split(';')[0] ?? '';
    const cookie = cookieOf('hwp.sid');
    const csrf = decodeURIComponent(cookieOf('hwp.csrf').slice('hwp.csrf='.length));
    const byCookie = { ...member.user, token: '' };
    const streams = [
      await open(byCookie, `workspace=${ws.name}`, { Cookie: cookie }),
      await open(byCookie, `workspace=${ws.name}`, { Cookie: cookie }, replicaBase),
    ];
    expect(streams.map((c) => c.status)).toEqual([200, 200]);
    // The same user's stream opened with the bearer token is another session: it stays.
    const stays = await open(member.user, `workspace=${ws.name}`, {}, replicaBase);

    await request(stack.collab.app)
      .post('/api/auth/logout')
      .set('Cookie', cookie)
      .set('X-CSRF-Token', csrf)
      .expect(204);
    await expectEventually(() => expect(streams.map((c) => c.ended)).toEqual([true, true]), {
      timeoutMs: 5_000,
    });
    expect(stays.ended).toBe(false);
  });

  test('sends heartbeat comments to a quiet stream (SSE_HEARTBEAT_MS) and ends streams on shutdown', async () => {
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

  test('sends heartbeats to quiet streams only: a stream that gets events needs none', async () => {
    const replica = await stack.startCollabReplica({ SSE_HEARTBEAT_MS: '2000' });
    const replicaBase = await listen(replica);
    const busy = await workspace();
    const quiet = await workspace();
    const busyClient = await open(busy.owner.user, `workspace=${busy.ws.name}`, {}, replicaBase);
    const quietClient = await open(quiet.owner.user, `workspace=${quiet.ws.name}`, {}, replicaBase);
    const emit = () =>
      replica.deps.bus.transaction((manager) =>
        eventsModuleFor(replica.deps).events.emit(manager, busy.ws, 'task', {}, { actor: 'system' }),
      );
    const first = await emit();
    await busyClient.waitFor((e) => e.id === first.id);
    const heartbeatsOf = (client: typeof busyClient) =>
      client.comments.filter((c) => c === 'heartbeat').length;
    const busyBefore = heartbeatsOf(busyClient);
    // Events every ~50 ms for longer than two intervals: the quiet stream gets a heartbeat within
    // each interval, the busy one none (one would follow 1.5 s without an event).
    let last = first;
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      last = await emit();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await busyClient.waitFor((e) => e.id === last.id);
    expect(heartbeatsOf(quietClient)).toBeGreaterThanOrEqual(2);
    expect(heartbeatsOf(busyClient)).toBe(busyBefore);
    expect(quietClient.events.filter((e) => e.type === 'task')).toEqual([]);
  }, 30_000);
});
