import { expectEventually } from '@hwp/platform/test-kit';
import type { EntityManager } from 'typeorm';
import { collabAs, type Stack } from '#test/collab-test-kit';
import { eventsModuleFor, useEventsStack } from '#test/events-kit';

// One collaboration process on its database (no replica), so stopping its outbox relay stops every
// publication of the events: what its streams still get came from the hand-over at commit.
let stack: Stack;
const { open, workspace } = useEventsStack((started) => {
  stack = started;
});

describe('GET /v1/events: events committed on this process', () => {
  test('reach its own streams at commit, without the relay and the broker', async () => {
    const { ws, owner } = await workspace();
    const client = await open(owner.user, `workspace=${ws.name}`);
    await expectEventually(() => expect(client.retry).not.toBeNull());
    await stack.collab.deps.bus.relay.stop();
    try {
      const emitted = await stack.collab.deps.bus.transaction((manager) =>
        eventsModuleFor(stack.collab.deps).events.emit(
          manager,
          ws,
          'task',
          { local: true },
          { actor: 'system' },
        ),
      );
      const got = await client.waitFor((e) => e.id === emitted.id, 5000);
      expect(got).toMatchObject({ type: 'task', actor: 'system', data: { local: true } });
      // A lock is written by SQL together with its event (no event object at hand): the stream
      // gets it from the log at commit.
      const path = `${ws.name}/${owner.username}/local.step`;
      await collabAs(stack.collab.app, owner.user).post('/v1/locks/lock').send({ path }).expect(200);
      const lock = await client.waitFor((e) => e.type === 'lock', 5000);
      expect(lock.id).toBeGreaterThan(emitted.id);
      // The outbox still holds both: the relay publishes them for other replicas once it runs.
      const [{ waiting }] = await stack.collab.deps.dataSource.query(
        'SELECT count(*)::int AS waiting FROM outbox WHERE published_at IS NULL',
      );
      expect(waiting).toBeGreaterThanOrEqual(2);
    } finally {
      stack.collab.deps.bus.relay.start();
    }
  });

  test('an event whose savepoint rolled back is not handed over; the one that took its id is', async () => {
    const { ws, owner } = await workspace();
    const client = await open(owner.user, `workspace=${ws.name}`);
    await expectEventually(() => expect(client.retry).not.toBeNull());
    const { events } = eventsModuleFor(stack.collab.deps);
    const emit = (manager: EntityManager, step: string) =>
      events.emit(manager, ws, 'task', { step }, { actor: 'system' });
    const [first, last] = await stack.collab.deps.dataSource.transaction(async (manager) => {
      const a = await emit(manager, 'kept');
      await manager
        .transaction(async (inner) => {
          await emit(inner, 'rolled back');
          throw new Error('undo the savepoint');
        })
        .catch(() => undefined);
      // The counter went back with the savepoint: this event gets the id the rolled-back one had.
      const c = await emit(manager, 'after the savepoint');
      return [a, c];
    });
    expect(last.id).toBe(first.id + 1);
    await client.waitFor((e) => e.id === last.id);
    expect(client.of('task').map((e) => [e.id, e.data])).toEqual([
      [first.id, { step: 'kept' }],
      [last.id, { step: 'after the savepoint' }],
    ]);
  });
});
