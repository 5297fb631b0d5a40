import type { CollabEvent } from '@hwp/contracts';
import { expectEventually } from '@hwp/platform/test-kit';
import { collabAs, type Stack } from '#test/collab-test-kit';
import { eventsModuleFor, useEventsStack } from '#test/events-kit';

let stack: Stack;
const { open, workspace, emit } = useEventsStack((started) => {
  stack = started;
});

describe('GET /v1/events', () => {
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
