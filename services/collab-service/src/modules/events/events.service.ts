import {
  type CollabEvent,
  type CollabEventPublishedData,
  type CollabEventType,
  RoutingKeys,
} from '@hwp/contracts';
import { type Bus, buildEnvelope } from '@hwp/platform';
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import { EventLogRepository, type LoggedEvent } from './event-log.repository';

/** Events committed on this process: one with its data, or those of a workspace written by SQL. */
export type Committed = { event: CollabEventPublishedData } | { workspaceId: string };

/** Whoever caused an event: a user (id and username) or the system. */
export type EventActor = 'system' | { id: string; username: string };

/** The workspace an event belongs to (a `WorkspaceAccess` fits). */
export interface EventWorkspace {
  id: string;
  name: string;
}

export interface EmitOptions {
  actor: EventActor;
  /** `<workspace>/<username>/<filename>` when the event concerns a file. */
  path?: string;
  /** The only user who receives it (`lock.request`, `mention`); everyone in the workspace when unset. */
  to?: { id: string; username: string };
}

/**
 * The publishing API of the collaboration host: every feature that has something to tell the
 * workspace's event streams calls `emit` inside its own transaction. The event gets the next id of
 * the workspace, a row in the event log (for `Last-Event-ID` replays) and an outbox row
 * (`collab.event.v1`) that every replica's broadcast consumer pushes to its SSE clients; all three
 * commit or roll back with the caller's change. This process's own clients get it at commit
 * (`onCommitted`), without waiting for the relay and the broker.
 *
 * The id comes with a row lock on the workspace's counter that lasts until the caller commits, so
 * events of one workspace are serialised: emit last in a transaction, after the checks that may fail.
 */
export class CollabEvents {
  private readonly log = new EventLogRepository();
  /**
   * Transactions that emitted and are still open: the workspaces they changed and the events they
   * wrote, told when they commit.
   */
  private readonly emitted = new WeakMap<QueryRunner, { workspaces: Set<string>; events: Committed[] }>();
  private readonly changeListeners: ((workspaceId: string) => void)[] = [];
  private readonly commitListeners: ((committed: Committed) => void)[] = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
  ) {
    // The outbox relay polls; nudging it right after the commit keeps the stream's latency low
    // whichever transaction helper the caller used (dataSource.transaction or bus.transaction).
    const watcher: EntitySubscriberInterface = {
      afterTransactionCommit: ({ queryRunner }) => {
        if (queryRunner.isTransactionActive) return;
        const emitted = this.emitted.get(queryRunner);
        if (!emitted) return;
        this.emitted.delete(queryRunner);
        this.bus.relay.nudge();
        for (const workspaceId of emitted.workspaces) this.changed(workspaceId);
        for (const committed of emitted.events) this.committed(committed);
      },
      afterTransactionRollback: ({ queryRunner }) => {
        if (!queryRunner.isTransactionActive) {
          this.emitted.delete(queryRunner);
          return;
        }
        // A savepoint rolled back: which of the events written so far survive is for the log to
        // say (the counter went back too, so an id may be written again): at commit their
        // workspaces are read from it instead.
        const emitted = this.emitted.get(queryRunner);
        if (emitted) {
          emitted.events = emitted.events.map((c) =>
            'event' in c ? { workspaceId: c.event.workspaceId } : c,
          );
        }
      },
    };
    dataSource.subscribers.push(watcher);
  }

  /**
   * Appends an event to the workspace's log and publishes it after commit. `manager` should be the
   * caller's transaction; outside one, the event commits on its own (it is one statement).
   */
  async emit<TData extends object>(
    manager: EntityManager,
    workspace: EventWorkspace,
    type: CollabEventType,
    data: TData,
    options: EmitOptions,
  ): Promise<CollabEvent<TData>> {
    const { logged, envelope, event, published } = this.prepare(workspace, type, data, options);
    event.id = await this.log.append(manager, logged, envelope);
    // As the log and the outbox hold it now: `data` may be the caller's objects, changed later.
    const written = JSON.parse(JSON.stringify(published)) as CollabEventPublishedData;
    const runner = manager.queryRunner;
    // An event for one user (import progress, a lock request, a mention) tells; it changes nothing.
    const change = options.to === undefined;
    // Outside a transaction the one statement has committed already.
    if (runner?.isTransactionActive) {
      const emitted = this.emitted.get(runner) ?? { workspaces: new Set<string>(), events: [] };
      if (change) emitted.workspaces.add(workspace.id);
      emitted.events.push({ event: written });
      this.emitted.set(runner, emitted);
    } else {
      this.bus.relay.nudge();
      if (change) this.changed(workspace.id);
      this.committed({ event: written });
    }
    return event;
  }

  /**
   * Calls `listener` with a workspace's id whenever something in it changed: on this process once
   * the change has committed (before its caller answers), and for changes made by other replicas
   * when their event arrives from the bus (see `changed`). Events addressed to one user are not
   * changes.
   */
  onChange(listener: (workspaceId: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** The workspace changed (committed here, or an event of it came from the bus). */
  changed(workspaceId: string): void {
    for (const listener of this.changeListeners) listener(workspaceId);
  }

  /**
   * Calls `listener` once events written on this process have committed: with each event, or, for
   * events written by SQL (`within`), with their workspace only. This process's own streams get
   * them from here at once; the bus brings them to the other replicas (and here again, where the
   * repeat is dropped).
   */
  onCommitted(listener: (committed: Committed) => void): void {
    this.commitListeners.push(listener);
  }

  private committed(committed: Committed): void {
    for (const listener of this.commitListeners) {
      try {
        listener(committed);
      } catch {
        // The change has committed whatever a listener does; the broadcast still brings the event.
      }
    }
  }

  /**
   * An event written by the caller's own statement, for hot paths that change and emit in one round
   * trip: the CTEs (see `EventLogRepository.appendCtes`) emit one event for the row of the CTE `source`
   * (none when it has no row), its data the jsonb expression `dataSql` over `source`; parameters are
   * numbered from `first`. After the statement commits, call `published()`.
   */
  within(
    workspace: EventWorkspace,
    type: CollabEventType,
    options: EmitOptions,
    statement: { source: string; dataSql: string; first: number },
  ): { ctes: string; params: unknown[] } {
    const { logged, envelope } = this.prepare(workspace, type, {}, options);
    return this.log.appendCtes(statement.source, statement.dataSql, statement.first, logged, envelope);
  }

  /** A statement with `within` events of the workspace committed: the relay publishes them now rather than at its next poll. */
  published(workspaceId: string): void {
    this.bus.relay.nudge();
    this.changed(workspaceId);
    this.committed({ workspaceId });
  }

  /** The event (id 0 until the append numbers it), its log row and its outbox envelope. */
  private prepare<TData extends object>(
    workspace: EventWorkspace,
    type: CollabEventType,
    data: TData,
    options: EmitOptions,
  ) {
    const { actor, path, to } = options;
    const event: CollabEvent<TData> = {
      id: 0,
      type,
      workspace: workspace.name,
      actor: actor === 'system' ? 'system' : actor.username,
      at: new Date().toISOString(),
      data,
    };
    if (path !== undefined) event.path = path;
    if (to) event.to = to.username;
    const published: CollabEventPublishedData = { workspaceId: workspace.id, event: event as CollabEvent };
    if (to) published.recipientId = to.id;
    const envelope = buildEnvelope({
      type: RoutingKeys.collabEvent,
      workspace: workspace.name,
      actor: actor === 'system' ? 'system' : actor.id,
      data: published,
    });
    const logged: LoggedEvent = {
      workspaceId: workspace.id,
      recipientId: to?.id ?? null,
      event: event as CollabEvent,
    };
    return { event, logged, envelope, published };
  }

  /** The latest change among events of `types` in a workspace (see EventLogRepository.lastChange). */
  lastChange(manager: EntityManager, workspaceId: string, types: readonly CollabEventType[]) {
    return this.log.lastChange(manager, workspaceId, types);
  }

  /** Drops log rows older than `hours` (the ids of the counters stay). */
  purgeOlderThan(hours: number): Promise<number> {
    return this.log.purgeOlderThan(this.dataSource.manager, hours);
  }
}
