import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CollabEvent, CollabEventType } from '@hwp/contracts';
import type { EventsModule } from '../../src/modules/events/events.module';
import { collabService } from '../../src/service';
import {
  type CollabTestService,
  collabAs,
  newUser,
  type Stack,
  startStack,
  type TestUser,
} from './collab-test-kit';
import { SseClient } from './sse-client';

/** What the tests of src/modules/events share: a stack with real sockets for streams, and its helpers. */

export const eventsModuleFor = (deps: Parameters<typeof collabService.exportsOf>[0]) =>
  collabService.exportsOf<EventsModule>(deps, 'events');

export interface Member {
  user: TestUser;
  id: string;
  username: string;
}

/**
 * A stack of its own (fresh databases) for the test file, started before its tests and stopped after
 * them, with the collaboration host listening on a real port; the streams a test opens are closed
 * after it. `started` gets the stack. Returns helpers bound to the stack.
 */
export function useEventsStack<S extends Stack = Stack>(
  started: (stack: S) => void = () => {},
  start: (env: { collab: Record<string, string> }) => Promise<S> = startStack as never,
) {
  let stack: S;
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
    stack = await start({ collab: { SSE_MAX_CONNECTIONS_PER_USER: '3' } });
    base = await listen(stack.collab);
    started(stack);
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

  return { listen, open, member, workspace, emit };
}
