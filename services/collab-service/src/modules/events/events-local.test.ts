import { expectEventually } from '@hwp/platform/test-kit';
import { collabAs, type Stack } from '../../../test/support/collab-test-kit';
import { eventsModuleFor, useEventsStack } from '../../../test/support/events-kit';

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
});
