import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import type { WorkspaceAccessExports } from '../workspaces/workspace-access.feature';
import { CreateParts1763900000300 } from './migrations/1763900000300-CreateParts';
import { partEntities } from './part.entity';
import { mountPartRoutes } from './parts.routes';

/** The parts catalog: parts, versions, numbering and templates, import (section 4.6). */
export const partsFeature = defineFeature<
  CollabConfig,
  Record<string, never>,
  { events: EventsModule; 'workspace-access': WorkspaceAccessExports }
>({
  name: 'parts',
  entities: partEntities,
  migrations: [CreateParts1763900000300],
  build: (deps, needs) => ({
    mount: (api) =>
      mountPartRoutes(
        {
          dataSource: deps.dataSource,
          events: needs.events.events,
          logger: deps.logger,
          config: deps.config,
        },
        needs['workspace-access'].routing(api),
      ),
    exports: {},
  }),
});
