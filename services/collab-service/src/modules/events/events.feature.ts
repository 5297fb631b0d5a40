import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { IdentityModule } from '../identity/identity.module';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import { eventEntities } from './collab-event.entity';
import { createEventsModule, type EventsModule } from './events.module';
import { CreateEventLog1763900000100 } from './migrations/1763900000100-CreateEventLog';
import { EventChangeMarks1764900000000 } from './migrations/1764900000000-EventChangeMarks';

/** The workspace event log and the SSE stream (DECISIONS.md section 7). */
export const eventsFeature = defineFeature<
  CollabConfig,
  EventsModule,
  { identity: IdentityModule; 'workspace-access': WorkspaceAccessExports }
>({
  name: 'events',
  entities: eventEntities,
  migrations: [CreateEventLog1763900000100, EventChangeMarks1764900000000],
  build: (deps, needs) => {
    const events = createEventsModule(deps);
    const access = needs['workspace-access'];
    // A logout or a revoked session ends the streams opened with it, on every replica.
    needs.identity.onSessionsEnded((keys) => events.hub.endSessions(keys));
    return {
      routes: access.routes([events.route]),
      consumers: () => events.registerConsumer(),
      exports: events,
    };
  },
});
