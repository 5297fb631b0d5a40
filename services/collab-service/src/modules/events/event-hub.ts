import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CollabEvent, CollabEventPublishedData } from '@hwp/contracts';
import type { Logger } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { EventLogRepository, LoggedEvent } from './event-log.repository';
import { type EncodedMessage, type EventSink, encodeMessage, HEARTBEAT } from './event-stream';

/** An event as written to the streams: serialised and encoded once, whatever the number of clients. */
interface Frame {
  id: number;
  recipientId: string | null;
  message: EncodedMessage;
  /** A member's removal: that user's streams of the workspace end once it is written to them. */
  endsAccessOf: string | null;
}

/** One open event stream of this process. */
export interface StreamClient {
  readonly workspaceId: string;
  readonly userId: string;
  /** The sessions the stream was opened with (req.sessionKeys): it ends when one of them does. */
  readonly sessionKeys: readonly string[];
  readonly sink: EventSink;
  /** Highest id this client has been given or has passed over; nothing at or below is sent again. */
  lastSeen: number;
  /** Live events held back while the client replays from the log; null once it is live. */
  buffer: Frame[] | null;
  /** When the stream was last written (performance.now()): a heartbeat goes only to quiet streams. */
  lastWriteAt: number;
  closed: boolean;
}

/** The streams of one workspace on this process, fed in id order. */
interface Channel {
  workspaceId: string;
  clients: Set<StreamClient>;
  /** Highest id handed to the clients; every id up to it has been (ids are gap-free). */
  lastId: number;
  /** Settles once `lastId` is known (the workspace's counter when the channel opened). */
  ready: Promise<void>;
  /** Work on the channel runs one item at a time, in order. */
  tail: Promise<void>;
}

/**
 * Heartbeats written per turn of the event loop: with thousands of quiet streams, events and
 * requests wait for one slice of writes, not for all of them.
 */
const HEARTBEAT_SLICE = 500;

export interface EventHubOptions {
  /** Longest a stream stays silent: a quiet stream gets a heartbeat comment within this time. */
  heartbeatMs: number;
  /** Events read per query when a client replays. */
  replayPageSize?: number;
}

/** `id:`/`event:`/`data:` lines of one SSE message (DECISIONS.md section 7). */
export function formatEvent(event: CollabEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** The user whose access to the workspace the event ends (`update` of a member with no role). */
function removedMember(event: CollabEvent): string | null {
  if (event.type !== 'update') return null;
  const data = event.data as { kind?: unknown; role?: unknown; userId?: unknown } | null;
  return data?.kind === 'member' && data.role === null && typeof data.userId === 'string'
    ? data.userId
    : null;
}

function frameOf(logged: { recipientId?: string | null; event: CollabEvent }): Frame {
  return {
    id: logged.event.id,
    recipientId: logged.recipientId ?? null,
    message: encodeMessage(formatEvent(logged.event)),
    endsAccessOf: removedMember(logged.event),
  };
}

/**
 * The event streams connected to this process. Every replica receives every `collab.event.v1`
 * (a broadcast subscription) and hands it to its local streams of that workspace; the events this
 * process commits also come straight from the commit, before the broadcast (whose copy is then a
 * repeat, dropped by id).
 *
 * Order and completeness: per workspace, events are handed out strictly in id order. Ids are
 * gap-free and commit in order, so when `N` arrives and the channel is at `M < N - 1`, ids
 * `M+1..N-1` are already in the log and are read from it first; ids at or below `M` (late or
 * repeated deliveries) are dropped. A client starts after `L` (its `Last-Event-ID`, else the latest
 * id when it connected): it is registered first, buffering live events, then replays `id > L` from
 * the log, then gets the buffer minus what the replay already gave it: exactly the missed events,
 * in order, once each.
 */
export class EventHub {
  private readonly channels = new Map<string, Channel>();
  private readonly perUser = new Map<string, number>();
  private readonly replayPageSize: number;
  private heartbeat: NodeJS.Timeout | null = null;
  private ticks = 0;
  /** The heartbeat in progress, if any (it writes in slices, across turns of the event loop). */
  private beating: Promise<void> | null = null;
  private clients = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly log: EventLogRepository,
    private readonly logger: Logger,
    private readonly options: EventHubOptions,
  ) {
    this.replayPageSize = options.replayPageSize ?? 500;
  }

  /** Open streams of a user on this process (the per-user cap). */
  connectionsOf(userId: string): number {
    return this.perUser.get(userId) ?? 0;
  }

  get size(): number {
    return this.clients;
  }

  /**
   * Where a new stream starts: the id the client last received (`Last-Event-ID`), capped at the
   * workspace's latest id (an id from elsewhere must not hide future events), or, without one, the
   * latest id. Read before the response starts, so a client misses nothing committed after it saw
   * the stream open.
   */
  async startingPoint(workspaceId: string, lastEventId: number | null): Promise<number> {
    const latest = await this.log.lastId(this.dataSource.manager, workspaceId);
    return lastEventId === null ? latest : Math.min(lastEventId, latest);
  }

  /**
   * Registers a stream at once (so the caller's cap check and the registration cannot interleave);
   * live events are held back until `start` has replayed what came after `after`.
   */
  open(params: {
    workspaceId: string;
    userId: string;
    sessionKeys?: readonly string[];
    sink: EventSink;
    after: number;
  }): StreamClient {
    const channel = this.channel(params.workspaceId);
    const client: StreamClient = {
      workspaceId: params.workspaceId,
      userId: params.userId,
      sessionKeys: params.sessionKeys ?? [],
      sink: params.sink,
      lastSeen: params.after,
      buffer: [],
      // The sink has just written the stream's `retry:` line.
      lastWriteAt: performance.now(),
      closed: false,
    };
    channel.clients.add(client);
    this.perUser.set(params.userId, this.connectionsOf(params.userId) + 1);
    this.clients++;
    // A tick every quarter of the interval (see beat).
    this.heartbeat ??= setInterval(() => this.tick(), Math.max(1, this.options.heartbeatMs / 4));
    this.heartbeat.unref();
    return client;
  }

  /** Replays the logged events after the client's starting point, then hands it the live ones. */
  async start(client: StreamClient): Promise<void> {
    const channel = this.channels.get(client.workspaceId);
    if (!channel || client.closed || !client.buffer) return;
    // After the channel knows where it starts, so the replay reaches at least that far.
    await channel.ready;
    const manager = this.dataSource.manager;
    let after = client.lastSeen;
    for (;;) {
      const page = await this.log.pageFor(
        manager,
        client.workspaceId,
        client.userId,
        after,
        this.replayPageSize,
      );
      if (client.closed) return;
      for (const logged of page) {
        after = logged.event.id;
        client.lastSeen = after;
        client.sink.write(formatEvent(logged.event));
        if (removedMember(logged.event) === client.userId) {
          client.sink.close();
          return;
        }
      }
      if (page.length > 0) client.lastWriteAt = performance.now();
      if (page.length < this.replayPageSize) break;
      await client.sink.drained();
    }
    const buffered = client.buffer;
    client.buffer = null;
    const now = performance.now();
    for (const frame of buffered) this.offer(client, frame, now);
  }

  /** Ends the streams opened with any of these sessions (a logout, a revocation): at once. */
  endSessions(keys: readonly string[]): number {
    const ended = new Set(keys);
    let closed = 0;
    for (const channel of [...this.channels.values()]) {
      for (const client of [...channel.clients]) {
        if (client.sessionKeys.some((key) => ended.has(key))) {
          client.sink.close();
          closed++;
        }
      }
    }
    return closed;
  }

  close(client: StreamClient): void {
    if (client.closed) return;
    client.closed = true;
    const channel = this.channels.get(client.workspaceId);
    if (channel?.clients.delete(client) && channel.clients.size === 0)
      this.channels.delete(client.workspaceId);
    const left = this.connectionsOf(client.userId) - 1;
    if (left > 0) this.perUser.set(client.userId, left);
    else this.perUser.delete(client.userId);
    this.clients--;
    if (this.clients === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
  }

  /** A `collab.event.v1` from the bus; resolves once the workspace's streams have it. */
  receive(data: CollabEventPublishedData): Promise<void> {
    const channel = this.channels.get(data.workspaceId);
    // A repeat (the broadcast's copy of an event handed over at its commit here) is dropped before
    // it is encoded; `lastId` only grows, and the check below still orders what is queued.
    if (!channel || data.event.id <= channel.lastId) return Promise.resolve();
    const frame = frameOf(data);
    return this.enqueue(channel, async () => {
      if (frame.id <= channel.lastId) return;
      await this.fill(channel, frame.id - 1);
      this.dispatch(channel, frame);
    });
  }

  /**
   * Brings the channels of `workspaceIds` (every channel by default) up to their workspace's
   * counter: events the bus did not bring (a broker outage, a replica that joined late) still reach
   * the streams, at the latest one heartbeat interval later; events this process wrote by SQL reach
   * them at commit.
   */
  async catchUp(workspaceIds: string[] = [...this.channels.keys()]): Promise<void> {
    const open = workspaceIds.filter((id) => this.channels.has(id));
    if (open.length === 0 || !this.dataSource.isInitialized) return;
    const counters = await this.log.lastIds(this.dataSource.manager, open);
    await Promise.all(
      [...counters].map(([workspaceId, lastId]) => {
        const channel = this.channels.get(workspaceId);
        return channel && lastId > channel.lastId
          ? this.enqueue(channel, () => this.fill(channel, lastId))
          : undefined;
      }),
    );
  }

  private channel(workspaceId: string): Channel {
    const existing = this.channels.get(workspaceId);
    if (existing) return existing;
    const channel: Channel = {
      workspaceId,
      clients: new Set(),
      lastId: 0,
      ready: Promise.resolve(),
      tail: Promise.resolve(),
    };
    this.channels.set(workspaceId, channel);
    channel.ready = this.enqueue(channel, async () => {
      channel.lastId = await this.log.lastId(this.dataSource.manager, workspaceId);
    });
    channel.ready.catch((error: unknown) => {
      // Without a starting point the channel cannot guarantee order: its clients reconnect later.
      this.logger.warn(
        { err: error, workspaceId },
        'event stream channel could not start; closing its streams',
      );
      if (this.channels.get(workspaceId) === channel) this.channels.delete(workspaceId);
      for (const client of channel.clients) client.sink.close();
    });
    return channel;
  }

  private enqueue(channel: Channel, work: () => Promise<void>): Promise<void> {
    const run = channel.tail.then(work);
    channel.tail = run.catch(() => undefined);
    return run;
  }

  /** Hands out the logged events after the channel's last id, up to `upTo`. */
  private async fill(channel: Channel, upTo: number): Promise<void> {
    if (upTo <= channel.lastId) return;
    const missing: LoggedEvent[] = await this.log.range(
      this.dataSource.manager,
      channel.workspaceId,
      channel.lastId,
      upTo,
    );
    for (const logged of missing) this.dispatch(channel, frameOf(logged));
    // Ids purged by the retention are gone for good; do not look for them again.
    channel.lastId = Math.max(channel.lastId, upTo);
  }

  private dispatch(channel: Channel, frame: Frame): void {
    if (frame.id <= channel.lastId) return;
    channel.lastId = frame.id;
    const now = performance.now();
    for (const client of channel.clients) this.offer(client, frame, now);
  }

  private offer(client: StreamClient, frame: Frame, now: number): void {
    if (client.closed) return;
    if (client.buffer) {
      client.buffer.push(frame);
      return;
    }
    if (frame.id <= client.lastSeen) return;
    client.lastSeen = frame.id;
    if (frame.recipientId !== null && frame.recipientId !== client.userId) return;
    client.lastWriteAt = now;
    if (frame.endsAccessOf === client.userId) {
      // Removed from the workspace: told so, then the stream ends (a reconnect is refused, 404).
      client.sink.writeMessage(frame.message);
      client.sink.close();
      return;
    }
    if (!client.sink.writeMessage(frame.message)) {
      // A client that does not read is cut off rather than buffered without bound; it reconnects
      // with its Last-Event-ID and replays from the log.
      this.logger.warn({ userId: client.userId }, 'event stream client too slow; closing its stream');
      client.sink.close();
    }
  }

  private tick(): void {
    this.beating ??= this.beat()
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'event stream heartbeat failed');
      })
      .finally(() => {
        this.beating = null;
      });
    // The catch-up once per interval.
    if (++this.ticks % 4 === 0) {
      this.catchUp().catch((error: unknown) => {
        this.logger.warn({ err: error }, 'event stream catch-up failed');
      });
    }
  }

  /**
   * A heartbeat comment to each stream that nothing was written to for five eighths of the
   * interval: a stream that gets events needs none. With a tick every quarter, a stream is silent
   * at most seven eighths of the interval (plus how late the ticks run); an idle one gets a
   * heartbeat every three quarters (each is stamped with its beat's start, one tick apart from
   * the next). Written in slices, so that a burst of heartbeats to thousands of quiet streams does
   * not hold up the events of busy ones.
   */
  private async beat(): Promise<void> {
    const started = performance.now();
    const quietSince = started - (this.options.heartbeatMs * 5) / 8;
    const due: StreamClient[] = [];
    for (const channel of this.channels.values()) {
      for (const client of channel.clients) if (client.lastWriteAt <= quietSince) due.push(client);
    }
    for (let i = 0; i < due.length; i++) {
      if (i > 0 && i % HEARTBEAT_SLICE === 0) await nextTurn();
      const client = due[i];
      // Closed, or given an event while earlier slices were written.
      if (client.closed || client.lastWriteAt > quietSince) continue;
      client.lastWriteAt = started;
      // A client that does not read is cut off by the next event, not by a heartbeat.
      client.sink.writeMessage(HEARTBEAT);
    }
  }
}
