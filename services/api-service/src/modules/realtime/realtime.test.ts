import { randomBytes } from 'node:crypto';
import { WS_CLOSE, WS_MAX_CONNECTIONS_PER_USER, WS_SUBSCRIBES_PER_MINUTE } from '@hwp/contracts';
import { listen, s3Env } from '@hwp/platform/test-kit';
import WebSocket from 'ws';
import { as, signUp, startApi, type TestUser } from '#test/api-test-kit';
import { team, upload } from '#test/factories';
import { inTenant, startFilesApi } from '#test/files-test-setup';

let stack: Awaited<ReturnType<typeof startFilesApi>>;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  // Short pings: membership ends are noticed within a test's patience.
  stack = await startFilesApi({ WS_PING_INTERVAL_MS: '300' });
  server = await listen(stack.api.app);
}, 90_000);
afterAll(async () => {
  await server?.close();
  await stack?.stop();
});

type Frame = { type: string; [key: string]: unknown };

/** A socket with every frame it received, and a wait for the next one matching. */
class Socket {
  readonly frames: Frame[] = [];
  private waiters: { match: (f: Frame) => boolean; done: (f: Frame) => void }[] = [];
  closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      this.frames.push(frame);
      for (const waiter of [...this.waiters]) {
        if (waiter.match(frame)) {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          waiter.done(frame);
        }
      }
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
  }

  next(match: (f: Frame) => boolean, timeoutMs = 15_000): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching frame; got ${JSON.stringify(this.frames)}`)),
        timeoutMs,
      );
      this.waiters.push({
        match,
        done: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
    });
  }

  send(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  close(): void {
    this.ws.close();
  }
}

const wsUrl = (query = '') => `${server.url.replace(/^http/, 'ws')}/ws${query}`;

/** Opens a socket with the token as a protocol value (as a browser does); resolves once `ready`. */
async function connect(
  user: TestUser,
  options: { tenant?: string; viaQuery?: boolean; base?: string } = {},
): Promise<Socket> {
  const query = new URLSearchParams();
  if (options.tenant) query.set('tenant', options.tenant);
  if (options.viaQuery) query.set('token', user.token);
  const url = (q: string) => (options.base ? `${options.base.replace(/^http/, 'ws')}/ws${q}` : wsUrl(q));
  const ws = options.viaQuery
    ? new WebSocket(url(`?${query}`))
    : new WebSocket(url(query.size ? `?${query}` : ''), ['bearer', user.token]);
  const socket = new Socket(ws);
  await socket.next((f) => f.type === 'ready');
  return socket;
}

/** The HTTP answer to a refused handshake. */
function refused(
  url: string,
  protocols?: string[],
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    ws.on('open', () => reject(new Error('the handshake succeeded')));
    ws.on('error', () => undefined);
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body || '{}') }));
    });
  });
}

describe('the WebSocket /ws', () => {
  test('the handshake needs a valid token; the bearer protocol is selected; a plain GET is 426', async () => {
    expect(await refused(wsUrl())).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect((await refused(wsUrl(), ['bearer', 'not.a.jwt'])).status).toBe(401);
    const user = await signUp(stack.api.app);
    const socket = await connect(user);
    expect(socket.ws.protocol).toBe('bearer');
    expect(socket.frames[0]).toMatchObject({ type: 'ready', userId: user.user.id });
    socket.close();
    const byQuery = await connect(user, { viaQuery: true });
    byQuery.close();
    const plain = await as(stack.api.app, user).get('/ws');
    expect(plain.status).toBe(426);
    expect(plain.body.code).toBe('upgrade_required');
    // A tenant the user is not a member of is refused at the handshake.
    const other = await signUp(stack.api.app);
    const foreign = await as(stack.api.app, other).get('/tenant/current');
    const foreignId = foreign.body.id as string;
    expect(foreignId).toBeDefined();
    expect((await refused(wsUrl(`?tenant=${foreignId}`), ['bearer', user.token])).status).toBe(403);
  });

  test('file processing reaches the uploader tenant’s `files` subscribers only', async () => {
    const { owner, member, tenant } = await team(stack.api);
    const outsider = await signUp(stack.api.app);
    const watcher = await connect(member, { tenant: tenant.id });
    const stranger = await connect(outsider);
    watcher.send({ type: 'subscribe', channel: 'files' });
    stranger.send({ type: 'subscribe', channel: 'files' });
    await watcher.next((f) => f.type === 'subscribed');
    await stranger.next((f) => f.type === 'subscribed');
    const file = await upload(
      inTenant(stack.api, owner, tenant.id),
      `${randomBytes(3).toString('hex')}.txt`,
      'hello',
    );
    const event = await watcher.next((f) => f.type === 'event');
    expect(event).toMatchObject({
      channel: 'files',
      event: 'file.processed.v1',
      data: { fileId: file.id, status: 'ready' },
    });
    // The outsider's own upload is delivered to them: the other tenant's event had its chance before.
    await upload(as(stack.api.app, outsider), 'mine.txt', 'mine');
    const own = await stranger.next((f) => f.type === 'event');
    expect((own.data as { fileId: string }).fileId).not.toBe(file.id);
    expect(stranger.frames.filter((f) => f.type === 'event')).toHaveLength(1);
    watcher.close();
    stranger.close();
  });

  test('a file’s processing reaches only the subscribers who may view the file', async () => {
    const { owner, member, tenant } = await team(stack.api);
    const client = inTenant(stack.api, owner, tenant.id);
    const name = `${randomBytes(3).toString('hex')}.txt`;
    const file = await upload(client, name, 'v1');
    const viewers = (view: string[]) =>
      client.put(`/files/${file.id}/permissions`).send({ view, edit: [], delete: [] }).expect(200);
    await viewers([owner.user.id]);
    const sockets = [
      await connect(owner, { tenant: tenant.id }),
      await connect(member, { tenant: tenant.id }),
    ];
    for (const socket of sockets) {
      socket.send({ type: 'subscribe', channel: 'files' });
      await socket.next((f) => f.type === 'subscribed');
    }
    const [mine, theirs] = sockets;
    // A new revision of the file only its owner may view, then a file every member may view.
    await upload(client, name, 'v2', { replace_if_exists: 'true' });
    const event = await mine.next((f) => f.type === 'event');
    expect((event.data as { fileId: string }).fileId).toBe(file.id);
    const open = await upload(client, `${randomBytes(3).toString('hex')}.txt`, 'for all');
    const seen = await theirs.next((f) => f.type === 'event');
    expect((seen.data as { fileId: string }).fileId).toBe(open.id);
    expect(theirs.frames.filter((f) => f.type === 'event')).toHaveLength(1);
    // Named by team (the tenant itself): its members may view it again.
    await viewers([tenant.id]);
    await upload(client, name, 'v3', { replace_if_exists: 'true' });
    expect(
      ((await theirs.next((f) => f.type === 'event' && f !== seen)).data as { fileId: string }).fileId,
    ).toBe(file.id);
    for (const socket of sockets) socket.close();
  });

  test('chat: a message reaches the room’s subscribers in the tenant, is kept as history, and not elsewhere', async () => {
    const { owner, member, tenant } = await team(stack.api);
    const outsider = await signUp(stack.api.app);
    const listener = await connect(member, { tenant: tenant.id });
    const stranger = await connect(outsider);
    listener.send({ type: 'subscribe', channel: 'chat:general' });
    stranger.send({ type: 'subscribe', channel: 'chat:general' });
    expect(await listener.next((f) => f.type === 'chat.history')).toMatchObject({
      room: 'general',
      messages: [],
    });
    await stranger.next((f) => f.type === 'chat.history');
    const sender = await connect(owner, { tenant: tenant.id });
    sender.send({ type: 'chat.send', room: 'general', text: 'Rev B is on the bench' });
    const received = await listener.next((f) => f.type === 'chat.message');
    expect(received.message).toMatchObject({
      room: 'general',
      userId: owner.user.id,
      text: 'Rev B is on the bench',
    });
    const history = await inTenant(stack.api, member, tenant.id).get('/chat/rooms/general/messages');
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ total: 1, items: [{ text: 'Rev B is on the bench' }] });
    // A later subscriber starts with the history.
    const late = await connect(owner, { tenant: tenant.id });
    late.send({ type: 'subscribe', channel: 'chat:general' });
    const replay = await late.next((f) => f.type === 'chat.history');
    expect((replay.messages as { text: string }[]).map((m) => m.text)).toEqual(['Rev B is on the bench']);
    // Another tenant's room of the same name is another room.
    const theirs = await as(stack.api.app, outsider).get('/chat/rooms/general/messages');
    expect(theirs.body).toMatchObject({ total: 0, items: [] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stranger.frames.filter((f) => f.type === 'chat.message')).toHaveLength(0);
    for (const s of [listener, stranger, sender, late]) s.close();
  });

  test('bad frames get an error frame and the socket stays open', async () => {
    const user = await signUp(stack.api.app);
    const socket = await connect(user);
    socket.ws.send('not json');
    expect(await socket.next((f) => f.type === 'error')).toMatchObject({ code: 'validation_failed' });
    socket.send({ type: 'subscribe', channel: 'files/../other' });
    socket.send({ type: 'chat.send', room: 'Bad Room', text: 'x' });
    socket.send({ type: 'chat.send', room: 'ok', text: '' });
    socket.send({ type: 'chat.send', room: 'ok', text: 'nul\u0000byte' });
    socket.send({ type: 'teleport' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const errors = socket.frames.filter((f) => f.type === 'error');
    expect(errors).toHaveLength(6);
    expect(errors.every((e) => e.code === 'validation_failed')).toBe(true);
    expect(socket.ws.readyState).toBe(WebSocket.OPEN);
    // At most 50 channels a socket; subscribing again is answered without a second history.
    for (let i = 0; i < 50; i++) socket.send({ type: 'subscribe', channel: `chat:room-${i}` });
    socket.send({ type: 'subscribe', channel: 'chat:room-0' });
    socket.send({ type: 'subscribe', channel: 'chat:room-50' });
    await socket.next((f) => f.type === 'error' && String(f.detail).includes('at most 50 channels'));
    const histories = () => socket.frames.filter((f) => f.type === 'chat.history').length;
    await socket.next(() => histories() >= 50);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(histories()).toBe(50);
    // A frame above the size limit ends the socket (1009), as the protocol says.
    socket.ws.send('x'.repeat(64 * 1024));
    expect((await socket.closed).code).toBe(1009);
  });

  test(`the ${WS_MAX_CONNECTIONS_PER_USER + 1}st socket of a user is closed with ${WS_CLOSE.tooManyConnections}`, async () => {
    const user = await signUp(stack.api.app);
    const open = await Promise.all(Array.from({ length: WS_MAX_CONNECTIONS_PER_USER }, () => connect(user)));
    const extra = new Socket(new WebSocket(wsUrl(), ['bearer', user.token]));
    expect((await extra.closed).code).toBe(WS_CLOSE.tooManyConnections);
    open[0].close();
    await open[0].closed;
    const again = await connect(user);
    again.close();
    for (const s of open.slice(1)) s.close();
  });

  test('a member removed from the tenant loses its sockets there', async () => {
    const { owner, member, tenant } = await team(stack.api);
    const socket = await connect(member, { tenant: tenant.id });
    const own = await connect(member);
    await inTenant(stack.api, owner, tenant.id)
      .delete(`/tenant/${tenant.id}/members/${member.user.id}`)
      .expect(204);
    expect((await socket.closed).code).toBe(WS_CLOSE.notMember);
    expect(own.ws.readyState).toBe(WebSocket.OPEN);
    own.close();
  });

  test('chat: the 61st message of a user in a minute is refused, across their sockets', async () => {
    const user = await signUp(stack.api.app);
    const [one, two] = await Promise.all([connect(user), connect(user)]);
    one.send({ type: 'subscribe', channel: 'chat:busy' });
    await one.next((f) => f.type === 'chat.history');
    for (let i = 0; i < 60; i++) (i % 2 ? one : two).send({ type: 'chat.send', room: 'busy', text: `m${i}` });
    await one.next(() => one.frames.filter((f) => f.type === 'chat.message').length === 60);
    two.send({ type: 'chat.send', room: 'busy', text: 'one too many' });
    expect(await two.next((f) => f.type === 'error')).toMatchObject({ code: 'rate_limited' });
    const stored = await as(stack.api.app, user).get('/chat/rooms/busy/messages').query({ pageSize: 100 });
    expect(stored.body.total).toBe(60);
    one.close();
    two.close();
  });

  test(`a socket that stops answering pings is closed with ${WS_CLOSE.unresponsive}; one that answers stays`, async () => {
    const user = await signUp(stack.api.app);
    const answering = await connect(user);
    // A client that never answers pings (a phone that went into a tunnel), pings every 300 ms here.
    const silent = new Socket(new WebSocket(wsUrl(), ['bearer', user.token], { autoPong: false }));
    await silent.next((f) => f.type === 'ready');
    expect((await silent.closed).code).toBe(WS_CLOSE.unresponsive);
    expect(answering.ws.readyState).toBe(WebSocket.OPEN);
    answering.close();
  });

  test('logout closes the session’s sockets', async () => {
    const user = await signUp(stack.api.app);
    const socket = await connect(user);
    await as(stack.api.app, user).post('/auth/logout').expect(204);
    expect((await socket.closed).code).toBe(WS_CLOSE.sessionEnded);
  });

  test('a chat message sent through one replica reaches a socket held by another', async () => {
    const config = stack.api.deps.config;
    const replica = await startApi({
      ...s3Env(stack.s3),
      DATABASE_URL: config.DATABASE_URL as string,
      AMQP_NAMESPACE: config.AMQP_NAMESPACE as string,
      DATA_DIR: config.DATA_DIR,
    });
    const replicaServer = await listen(replica.app);
    try {
      const { owner, member, tenant } = await team(stack.api);
      const onReplica = await connect(member, { tenant: tenant.id, base: replicaServer.url });
      onReplica.send({ type: 'subscribe', channel: 'chat:builds' });
      await onReplica.next((f) => f.type === 'chat.history');
      const sender = await connect(owner, { tenant: tenant.id });
      sender.send({ type: 'chat.send', room: 'builds', text: 'EVT build passed' });
      const got = await onReplica.next((f) => f.type === 'chat.message');
      expect(got.message).toMatchObject({ room: 'builds', text: 'EVT build passed', userId: owner.user.id });
      onReplica.close();
      sender.close();
    } finally {
      await replicaServer.close();
      await replica.deps.lifecycle.shutdown();
    }
  });
});

describe('the WebSocket /ws without the ping to rely on', () => {
  // Pings a minute apart: what ends a socket here is the event that ended its access.
  let slow: Awaited<ReturnType<typeof startFilesApi>>;
  let slowServer: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    slow = await startFilesApi({ WS_PING_INTERVAL_MS: '60000' });
    slowServer = await listen(slow.api.app);
  }, 90_000);
  afterAll(async () => {
    await slowServer?.close();
    await slow?.stop();
  });

  test('a member removed from the tenant loses its sockets there at once, on the removal event', async () => {
    const { owner, member, tenant } = await team(slow.api);
    const socket = await connect(member, { tenant: tenant.id, base: slowServer.url });
    const own = await connect(member, { base: slowServer.url });
    await inTenant(slow.api, owner, tenant.id)
      .delete(`/tenant/${tenant.id}/members/${member.user.id}`)
      .expect(204);
    const closed = await Promise.race([
      socket.closed,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 5_000)),
    ]);
    expect(closed?.code).toBe(WS_CLOSE.notMember);
    expect(own.ws.readyState).toBe(WebSocket.OPEN);
    own.close();
  });

  test('a client that never reads and churns subscriptions to a room with history is cut off', async () => {
    const user = await signUp(slow.api.app);
    const tenantId = (await as(slow.api.app, user).get('/tenant/current')).body.id as string;
    // Fifty stored messages of 4,000 characters: each replay would be about 200 KB.
    await slow.api.deps.dataSource.query(
      `INSERT INTO chat_messages (id, tenant_id, room, user_id, text, created_at)
       SELECT gen_random_uuid(), $1, 'big', $2, repeat('x', 4000), now() - make_interval(secs => n)
         FROM generate_series(1, 50) AS n`,
      [tenantId, user.user.id],
    );
    const socket = await connect(user, { base: slowServer.url });
    socket.ws.pause();
    for (let i = 0; i < 2_000 && socket.ws.readyState === WebSocket.OPEN; i++) {
      socket.send({ type: 'subscribe', channel: 'chat:big' });
      socket.send({ type: 'unsubscribe', channel: 'chat:big' });
    }
    socket.ws.resume();
    const closed = await socket.closed;
    expect([WS_CLOSE.tooManySubscribes, WS_CLOSE.tooSlow]).toContain(closed.code);
    // At most the subscribes of a minute got a replay, however many were sent.
    const replays = socket.frames.filter((f) => f.type === 'chat.history' && !f.skipped);
    expect(replays.length).toBeLessThanOrEqual(WS_SUBSCRIBES_PER_MINUTE);
  });
});
