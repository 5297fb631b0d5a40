import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { WorkspaceAccessExports } from '../workspaces/workspace-access.feature';
import { eventEntities } from './collab-event.entity';
import { createEventsModule, type EventsModule } from './events.module';
import { CreateEventLog1763900000100 } from './migrations/1763900000100-CreateEventLog';

/** The workspace event log and the SSE stream (DECISIONS.md section 7). */
export const eventsFeature = defineFeature<
  CollabConfig,
  EventsModule,
  { 'workspace-access': WorkspaceAccessExports }
>({
  name: 'events',
  entities: eventEntities,
  migrations: [CreateEventLog1763900000100],
  build: (deps, needs) => {
    const events = createEventsModule(deps);
    const access = needs['workspace-access'];
    return {
      routes: access.routes([events.route]),
      consumers: () => events.registerConsumer(),
      exports: events,
    };
  },
});
