import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import { BomSettingsService } from './bom-settings.service';
import { importParts } from './import/part-import.routes';
import { PartImportService } from './import/part-import.service';
import { CreateParts1763900000300 } from './migrations/1763900000300-CreateParts';
import { AddCurrencyRates1764100000050 } from './migrations/1764100000050-AddCurrencyRates';
import { PartsPrefixStatistics1764500000000 } from './migrations/1764500000000-PartsPrefixStatistics';
import { PartsImportOrigin1764700000000 } from './migrations/1764700000000-PartsImportOrigin';
import { PartsNameSampleIndex1765000000000 } from './migrations/1765000000000-PartsNameSampleIndex';
import { partEntities } from './part.entity';
import { PartVersionsService } from './part-versions.service';
import { PartsService } from './parts.service';
import { getBomSettings, updateBomSettings } from './routes/bom-settings.routes';
import {
  approveVersion,
  createVersion,
  editVersion,
  listVersions,
  rejectVersion,
  submitVersion,
} from './routes/part-versions.routes';
import { createPart, listParts, partDetail, updatePart } from './routes/parts.routes';

export interface PartsExports {
  parts: PartsService;
  versions: PartVersionsService;
  settings: BomSettingsService;
  imports: PartImportService;
}

/** The parts catalog (section 4.6): parts, versions, numbering and templates, import; BOM settings (4.7). */
export const partsFeature = defineFeature<
  CollabConfig,
  PartsExports,
  { events: EventsModule; 'workspace-access': WorkspaceAccessExports }
>({
  name: 'parts',
  entities: partEntities,
  migrations: [
    CreateParts1763900000300,
    AddCurrencyRates1764100000050,
    PartsPrefixStatistics1764500000000,
    PartsImportOrigin1764700000000,
    PartsNameSampleIndex1765000000000,
  ],
  build: ({ dataSource, logger, config, metrics }, { events, 'workspace-access': access }) => {
    const settings = new BomSettingsService(dataSource);
    const parts = new PartsService(dataSource, settings, events.events);
    const versions = new PartVersionsService(dataSource, events.events);
    const maxBytes = config.IMPORT_MAX_MB * 1024 * 1024;
    const imports = new PartImportService(dataSource, settings, events.events, logger, {
      maxBytes,
      maxRows: config.IMPORT_MAX_ROWS,
      timeoutMs: config.IMPORT_TIMEOUT_MS,
      maxMemoryMb: config.IMPORT_MEMORY_MB,
      concurrency: config.IMPORT_CONCURRENCY,
      queueWaitMs: config.IMPORT_QUEUE_WAIT_MS,
    });
    return {
      // This order is the order of the OpenAPI document.
      routes: access.routes([
        importParts(imports, maxBytes, metrics.time),
        createPart(parts),
        listParts(parts),
        partDetail(parts),
        updatePart(parts),
        createVersion(versions),
        listVersions(versions),
        editVersion(versions),
        submitVersion(versions),
        approveVersion(versions),
        rejectVersion(versions),
        getBomSettings(settings),
        updateBomSettings(settings),
      ]),
      exports: { parts, versions, settings, imports },
    };
  },
});
