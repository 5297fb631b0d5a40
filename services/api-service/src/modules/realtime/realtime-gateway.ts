import { type IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  CHAT_HISTORY_ON_SUBSCRIBE,
  ChannelFrame,
  type ChatMessage,
  ChatSendFrame,
  type TenantRole,
  WS_CLOSE,
  WS_MAX_BUFFERED_BYTES,
  WS_MAX_CONNECTIONS_PER_USER,
  WS_SUBSCRIBES_PER_MINUTE,
} from '@hwp/contracts';
import { AppError, errorBody, type Logger, UnauthorizedError, validateInput } from '@hwp/platform';
import type { Request, RequestHandler, Response } from 'express';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import type { ChatService } from './chat.service';

/** Largest frame a client may send (a chat message is at most 4,000 characters). */
const MAX_FRAME_BYTES = 32 * 1024;
/** Channels one socket may hold. */
const MAX_CHANNELS = 50;
/** Chat messages one user may send per minute on this process. */
const CHAT_PER_MINUTE = 60;
/** A socket with more unread than this gets no history replay (it gets `chat.history` with none). */
const REPLAY_MAX_UNREAD_BYTES = 64 * 1024;

interface Client {
  ws: WebSocket;
  userId: string;
  sessionId: string;
  tenant: ResolvedTenant;
  channels: Set<string>;
  alive: boolean;
  /** When the socket's subscribe frames of the last minute came. */
  subscribes: number[];
  /** History replayed to the socket in the last minute: when, and how many bytes. */
  replayed: { at: number; bytes: number }[];
}

export interface RealtimeGatewayOptions {
  /** The API host's authentication and tenant resolution, run on the upgrade request. */
  signIn: RequestHandler[];
  chat: ChatService;
  logger: Logger;
  pingIntervalMs: number;
  /** Of these user and tenant pairs, the keys `<user>|<tenant>` that are still memberships (checked at every ping round). */
  memberships(pairs: { userId: string; tenantId: string }[]): Promise<Set<string>>;
}

/** Runs an express middleware outside express: resolves on `next()`, rejects on `next(error)`. */
function run(handler: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      const result = handler(req, res, (error?: unknown) => (error ? reject(error) : resolve())) as unknown;
      if (result instanceof Promise) result.catch(reject);
    } catch (error) {
      reject(error);
    }
  });
}

/** The access token of an upgrade: the protocol value that is not `bearer`, or `?token=`. */
function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const offered = (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return offered.find((p) => p.toLowerCase() !== 'bearer') ?? url.searchParams.get('token') ?? undefined;
}

/** Refuses an upgrade with the error's status and the error body (the handshake never completes). */
function refuse(socket: Duplex, error: AppError) {
  const body = JSON.stringify(errorBody(error, '/ws'));
  const lines = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(error.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * The WebSocket of the API host (DECISIONS.md section 7): authenticated at the upgrade, one tenant
 * per socket, channels `files` (the tenant's file processing) and `chat:<room>` (the tenant's chat
 * rooms, history first), at most WS_MAX_CONNECTIONS_PER_USER sockets per user on this process,
 * pings every `pingIntervalMs` (a socket without a pong is closed), and delivery across replicas
 * through the broker (`deliver` is called by each replica's broadcast consumers).
 */
export class RealtimeGateway {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
  });
  private readonly clients = new Set<Client>();
  private readonly perUser = new Map<string, number>();
  /** When each user sent their chat messages of the last minute (on this process). */
  private readonly chatSent = new Map<string, number[]>();
  private readonly pinger: NodeJS.Timeout;

  constructor(private readonly options: RealtimeGatewayOptions) {
    this.pinger = setInterval(() => this.ping(), options.pingIntervalMs);
    this.pinger.unref();
  }

  get size(): number {
    return this.clients.size;
  }

  /** `server.on('upgrade')` for `/ws`. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/ws', 'http://localhost');
    const token = tokenOf(req, url);
    if (!token)
      return refuse(
        socket,
        new UnauthorizedError('Send the access token as a Sec-WebSocket-Protocol value or ?token='),
      );
    // Cookies are not taken: a cross-site page could otherwise open a socket with the visitor's session.
    delete req.headers.cookie;
    req.headers.authorization = `Bearer ${token}`;
    const tenant = url.searchParams.get('tenant');
    if (tenant) req.headers['x-tenant-id'] = tenant;
    const expressReq = req as Request;
    // The middlewares get an express response that goes nowhere (headers they set are dropped).
    const res = Object.setPrototypeOf(
      new ServerResponse(req),
      (expressReq.app as unknown as { response: object }).response,
    ) as Response;
    expressReq.res = res;
    try {
      for (const handler of this.options.signIn) await run(handler, expressReq, res);
    } catch (error) {
      if (error instanceof AppError) return refuse(socket, error);
      this.options.logger.error({ err: error }, 'websocket sign-in failed');
      return refuse(socket, new AppError('unavailable', 'Try again'));
    }
    const user = expressReq.user;
    const resolved = expressReq.tenant;
    if (!user || !resolved) return refuse(socket, new UnauthorizedError());
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, user.id, user.sessionId, resolved));
  }

  private attach(ws: WebSocket, userId: string, sessionId: string, tenant: ResolvedTenant): void {
    const open = this.perUser.get(userId) ?? 0;
    if (open >= WS_MAX_CONNECTIONS_PER_USER) {
      ws.close(WS_CLOSE.tooManyConnections, `At most ${WS_MAX_CONNECTIONS_PER_USER} sockets per user`);
      return;
    }
    this.perUser.set(userId, open + 1);
    const client: Client = {
      ws,
      userId,
      sessionId,
      tenant,
      channels: new Set(),
      alive: true,
      subscribes: [],
      replayed: [],
    };
    this.clients.add(client);
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('message', (data, isBinary) => {
      this.receive(client, data, isBinary).catch((error: unknown) => {
        this.options.logger.error({ err: error }, 'websocket frame failed');
        this.send(client, { type: 'error', code: 'internal', detail: 'The frame could not be handled' });
      });
    });
    ws.on('close', () => {
      this.clients.delete(client);
      const left = (this.perUser.get(userId) ?? 1) - 1;
      if (left > 0) this.perUser.set(userId, left);
      else {
        this.perUser.delete(userId);
        this.chatSent.delete(userId);
      }
    });
    ws.on('error', () => ws.terminate());
    this.send(client, { type: 'ready', tenantId: tenant.id, userId });
  }

  private async receive(client: Client, data: RawData, isBinary: boolean): Promise<void> {
    // A socket being closed (cut off, signed out) reads nothing more of what it had sent.
    if (client.ws.readyState !== client.ws.OPEN) return;
    if (isBinary)
      return this.send(client, { type: 'error', code: 'validation_failed', detail: 'Frames are JSON text' });
    let frame: unknown;
    try {
      frame = JSON.parse(data.toString());
    } catch {
      return this.send(client, {
        type: 'error',
        code: 'validation_failed',
        detail: 'A frame is one JSON object',
      });
    }
    const type = (frame as { type?: unknown } | null)?.type;
    try {
      if (type === 'subscribe' || type === 'unsubscribe') {
        const { channel } = await validateInput(ChannelFrame, frame, 'body');
        return await this.subscribe(client, type, channel);
      }
      if (type === 'chat.send') {
        const { room, text } = await validateInput(ChatSendFrame, frame, 'body');
        return await this.chat(client, room, text);
      }
      this.send(client, {
        type: 'error',
        code: 'validation_failed',
        detail: 'type must be subscribe, unsubscribe or chat.send',
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.send(client, { type: 'error', code: error.code, detail: error.detail, errors: error.errors });
    }
  }

  private async subscribe(client: Client, type: 'subscribe' | 'unsubscribe', channel: string): Promise<void> {
    if (type === 'unsubscribe') {
      client.channels.delete(channel);
      return this.send(client, { type: 'unsubscribed', channel });
    }
    // Every subscribe may replay history: a socket that churns subscriptions is cut off.
    const now = Date.now();
    client.subscribes = client.subscribes.filter((at) => at > now - 60_000);
    client.subscribes.push(now);
    if (client.subscribes.length > WS_SUBSCRIBES_PER_MINUTE) {
      client.ws.close(WS_CLOSE.tooManySubscribes, `At most ${WS_SUBSCRIBES_PER_MINUTE} subscribes a minute`);
      return;
    }
    // Subscribing again answers again but reads no history again; a socket holds a bounded set.
    if (client.channels.has(channel)) return this.send(client, { type: 'subscribed', channel });
    if (client.channels.size >= MAX_CHANNELS) {
      return this.send(client, {
        type: 'error',
        code: 'validation_failed',
        detail: `A socket subscribes to at most ${MAX_CHANNELS} channels`,
      });
    }
    client.channels.add(channel);
    this.send(client, { type: 'subscribed', channel });
    if (channel.startsWith('chat:')) {
      const room = channel.slice('chat:'.length);
      // A socket that has not read what it was sent, or was replayed a megabyte of history this
      // minute, gets no replay on top (the messages route has it); the history is read only for one
      // that keeps up.
      client.replayed = client.replayed.filter((r) => r.at > now - 60_000);
      const replayedBytes = client.replayed.reduce((sum, r) => sum + r.bytes, 0);
      if (client.ws.bufferedAmount > REPLAY_MAX_UNREAD_BYTES || replayedBytes >= WS_MAX_BUFFERED_BYTES) {
        return this.send(client, { type: 'chat.history', room, messages: [], skipped: true });
      }
      const page = await this.options.chat.history(client.tenant.scope, room, 1, CHAT_HISTORY_ON_SUBSCRIBE);
      const text = JSON.stringify({ type: 'chat.history', room, messages: page.items.reverse() });
      client.replayed.push({ at: now, bytes: text.length });
      this.write(client, text);
    }
  }

  private async chat(client: Client, room: string, text: string): Promise<void> {
    const now = Date.now();
    const sent = (this.chatSent.get(client.userId) ?? []).filter((at) => at > now - 60_000);
    if (sent.length >= CHAT_PER_MINUTE) {
      return this.send(client, {
        type: 'error',
        code: 'rate_limited',
        detail: `At most ${CHAT_PER_MINUTE} chat messages a minute`,
      });
    }
    sent.push(now);
    this.chatSent.set(client.userId, sent);
    // Delivered to the room's subscribers (this socket too) by the broadcast consumer after commit.
    await this.options.chat.send(client.tenant.scope, client.userId, room, text);
  }

  /**
   * A `file.processed.v1` of a tenant, to its sockets subscribed to `files` whose user may view the
   * file (`viewers` picks them from the subscribers: the file's own permissions).
   */
  async fileEvent(
    tenantId: string,
    type: string,
    data: unknown,
    viewers: (
      tenant: ResolvedTenant,
      readers: { userId: string; role: TenantRole }[],
    ) => Promise<Set<string>>,
  ): Promise<void> {
    const subscribed = [...this.clients].filter((c) => c.tenant.id === tenantId && c.channels.has('files'));
    if (subscribed.length === 0) return;
    const readers = new Map(subscribed.map((c) => [c.userId, { userId: c.userId, role: c.tenant.role }]));
    const allowed = await viewers(subscribed[0].tenant, [...readers.values()]);
    this.deliver(tenantId, 'files', { type: 'event', channel: 'files', event: type, data }, (client) =>
      allowed.has(client.userId),
    );
  }

  /** An image operation's new state, to its user's sockets in its tenant subscribed to `image-operations`. */
  imageOperation(tenantId: string, userId: string, operation: unknown): void {
    this.deliver(
      tenantId,
      'image-operations',
      { type: 'event', channel: 'image-operations', operation },
      (client) => client.userId === userId,
    );
  }

  /** A stored chat message, to the sockets of its tenant subscribed to its room. */
  chatMessage(tenantId: string, message: ChatMessage): void {
    this.deliver(tenantId, `chat:${message.room}`, { type: 'chat.message', message });
  }

  /** A membership that ended (removed, left): that user's sockets in the tenant close at once. */
  membershipEnded(tenantId: string, userId: string): void {
    for (const client of this.clients) {
      if (client.tenant.id === tenantId && client.userId === userId)
        client.ws.close(WS_CLOSE.notMember, 'No longer a member of the tenant');
    }
  }

  /** Sessions that ended: their sockets close (code WS_CLOSE.sessionEnded). */
  sessionsEnded(sessionIds: string[]): void {
    const ended = new Set(sessionIds);
    for (const client of this.clients) {
      if (ended.has(client.sessionId)) client.ws.close(WS_CLOSE.sessionEnded, 'The session ended');
    }
  }

  private deliver(tenantId: string, channel: string, frame: object, to?: (client: Client) => boolean): void {
    let text: string | undefined;
    for (const client of this.clients) {
      if (client.tenant.id !== tenantId || !client.channels.has(channel)) continue;
      if (to && !to(client)) continue;
      text ??= JSON.stringify(frame);
      this.write(client, text);
    }
  }

  private send(client: Client, frame: object): void {
    this.write(client, JSON.stringify(frame));
  }

  /**
   * Sends unless the socket already holds more than WS_MAX_BUFFERED_BYTES its client has not read:
   * then it is closed (WS_CLOSE.tooSlow) and dropped, rather than buffered without bound in memory.
   */
  private write(client: Client, text: string): void {
    const { ws } = client;
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount + text.length > WS_MAX_BUFFERED_BYTES) {
      this.options.logger.warn({ userId: client.userId }, 'websocket client does not read; closing it');
      ws.close(WS_CLOSE.tooSlow, 'Too much unread output');
      // The close frame queues behind what is unread: the socket goes now.
      ws.terminate();
      return;
    }
    ws.send(text);
  }

  private ping(): void {
    this.recheckMemberships().catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'websocket membership check failed');
    });
    for (const client of this.clients) {
      if (!client.alive) {
        client.ws.close(WS_CLOSE.unresponsive, 'No pong');
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
  }

  /** A user who left a tenant (or was removed) loses its sockets there within one ping interval. */
  private async recheckMemberships(): Promise<void> {
    const key = (c: Client) => `${c.userId}|${c.tenant.id}`;
    const pairs = new Map<string, { userId: string; tenantId: string }>();
    for (const client of this.clients)
      pairs.set(key(client), { userId: client.userId, tenantId: client.tenant.id });
    if (pairs.size === 0) return;
    const current = await this.options.memberships([...pairs.values()]);
    for (const client of this.clients) {
      if (!current.has(key(client))) client.ws.close(WS_CLOSE.notMember, 'No longer a member of the tenant');
    }
  }

  /** Shutdown: every socket is told to reconnect elsewhere. */
  close(): void {
    clearInterval(this.pinger);
    for (const client of this.clients) client.ws.close(WS_CLOSE.goingAway, 'Server shutting down');
    this.wss.close();
  }
}
