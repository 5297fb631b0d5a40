import { RoutingKeys } from '@hwp/contracts';
import type { PlatformDeps } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { CollabRoute } from '../workspace-access/workspace-route';
import { EventHub } from './event-hub';
import { EventLogRepository } from './event-log.repository';
import { streamEvents } from './events.routes';
import { CollabEvents } from './events.service';
import { PresenceService } from './presence.service';

/** How often presence rows are refreshed and stale ones swept (a third of their lifetime). */
const PRESENCE_STALE_MS = 60_000;
const HOUSEKEEPING_MS = PRESENCE_STALE_MS / 3;
const PURGE_EVERY_MS = 10 * 60_000;

export interface EventsModule {
  /** The publishing API: `events.emit(manager, workspace, type, data, { actor, path?, to? })`. */
  events: CollabEvents;
  /** Who is online (GET /v1/users), across replicas. */
  presence: PresenceService;
  hub: EventHub;
  /** `GET /v1/events`. */
  route: CollabRoute;
  /** The broadcast consumer that feeds this process's streams. */
  registerConsumer(): Promise<void>;
  /** Refreshes presence, sweeps dead replicas' rows and purges the log; runs on a timer too. */
  housekeeping(): Promise<void>;
}

/**
 * The event log and stream of the collaboration host: writers (`events`), presence, the hub that
 * pushes to this process's streams, its routes, its broadcast consumer and housekeeping timer.
 */
export function createEventsModule(deps: PlatformDeps<CollabConfig>): EventsModule {
  const { config, dataSource, bus, logger } = deps;
  const log = logger.child({ module: 'events' });
  const events = new CollabEvents(dataSource, bus);
  const presence = new PresenceService(dataSource, events, log, { staleMs: PRESENCE_STALE_MS });
  const hub = new EventHub(dataSource, new EventLogRepository(), log, {
    heartbeatMs: config.SSE_HEARTBEAT_MS,
  });
  deps.metrics.gauge('hwp_sse_streams', 'Server-sent event streams open on this instance', () => hub.size);
  // Events committed here reach this process's streams at once, without the relay and broker round
  // trip; the broadcast brings them again (dropped by id) and carries them to the other replicas.
  // On the next turn of the event loop: the request that committed answers first, rather than
  // after a fan-out to thousands of streams.
  events.onCommitted((committed) => {
    setImmediate(() => {
      const handed =
        'event' in committed ? hub.receive(committed.event) : hub.catchUp([committed.workspaceId]);
      handed.catch((error: unknown) => {
        // The broadcast, or the periodic catch-up, still brings it.
        log.warn({ err: error }, 'event stream hand-over after commit failed');
      });
    });
  });
  let lastPurge = 0;

  async function housekeeping(): Promise<void> {
    await presence.refresh();
    await presence.sweep();
    if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = Date.now();
      const purged = await events.purgeOlderThan(config.EVENT_LOG_RETENTION_HOURS);
      if (purged > 0) log.info({ purged }, 'old events purged from the event log');
    }
  }

  const timer = setInterval(() => {
    // The runtime closes the database without telling modules: stop with it.
    if (!dataSource.isInitialized) {
      clearInterval(timer);
      return;
    }
    housekeeping().catch((error: unknown) => log.warn({ err: error }, 'event housekeeping failed'));
  }, HOUSEKEEPING_MS);
  timer.unref();

  const module: EventsModule = {
    events,
    presence,
    hub,
    route: streamEvents({ hub, presence, config, lifecycle: deps.lifecycle, logger: log }),
    async registerConsumer() {
      await bus.subscribeTo(
        { consumer: 'event-stream', keys: [RoutingKeys.collabEvent], broadcast: true, prefetch: 50 },
        async ({ data }) => {
          // Also this replica's own events: their change was already told at commit; twice is harmless.
          // An event for one user (recipientId) changes nothing.
          if (data.recipientId === undefined) events.changed(data.workspaceId);
          await hub.receive(data);
        },
      );
    },
    housekeeping,
  };
  return module;
}
