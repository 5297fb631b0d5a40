// The README's "Adding a feature" example (the BOM feature, trimmed), compiled by the typecheck:
// test/readme/readme.test.ts keeps the README's copy identical to the part between the markers.
import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../services/collab-service/src/config';
import { bomEntities } from '../../services/collab-service/src/modules/boms/bom.entity';
import { BomsService } from '../../services/collab-service/src/modules/boms/boms.service';
import { CreateBoms1764100000000 } from '../../services/collab-service/src/modules/boms/migrations/1764100000000-CreateBoms';
import { bomDetail, createBom } from '../../services/collab-service/src/modules/boms/routes/boms.routes';
import type { EventsModule } from '../../services/collab-service/src/modules/events/events.module';
import type { PartsExports } from '../../services/collab-service/src/modules/parts/parts.feature';
import type { WorkspaceAccessExports } from '../../services/collab-service/src/modules/workspace-access/workspace-access.feature';

// readme-example:start
/** What the feature gives the features that name it in their needs. */
export interface BomsExports {
  boms: BomsService;
}

export const bomsFeature = defineFeature<
  CollabConfig,
  BomsExports,
  { events: EventsModule; 'workspace-access': WorkspaceAccessExports; parts: PartsExports }
>({
  name: 'boms',
  entities: bomEntities,
  migrations: [CreateBoms1764100000000],
  build: ({ dataSource, bus }, { events, 'workspace-access': access, parts }) => {
    const boms = new BomsService(dataSource, events.events, bus, parts.settings);
    return { routes: access.routes([createBom(boms), bomDetail(boms)]), exports: { boms } };
  },
});
// readme-example:end
