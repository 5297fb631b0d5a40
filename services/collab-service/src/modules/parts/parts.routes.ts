import type { Logger } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { CollabConfig } from '../../config';
import type { CollabRouting } from '../workspaces/workspace-route';
import { BomSettingsService } from './bom-settings.service';
import { mountPartImportRoute } from './import/part-import.routes';
import { PartImportService } from './import/part-import.service';
import { PartVersionsService } from './part-versions.service';
import { type PartEvents, PartsService } from './parts.service';
import { getBomSettings, updateBomSettings } from './routes/bom-settings.routes';
import {
  approveVersion,
  createVersion,
  editVersion,
  listVersions,
  rejectVersion,
  submitVersion,
} from './routes/part-versions.routes';
import { createPart, listParts, partDetail, updatePart, whereUsed } from './routes/parts.routes';

export { acceptSnakeCase } from './routes/part-routing';

export interface PartsModule {
  parts: PartsService;
  versions: PartVersionsService;
  settings: BomSettingsService;
  imports: PartImportService;
}

/** Parts (section 4.6) and the workspace BOM settings (section 4.7). */
export function mountPartRoutes(
  deps: { dataSource: DataSource; events: PartEvents; logger: Logger; config: CollabConfig },
  routing: CollabRouting,
) {
  const { config } = deps;
  const settings = new BomSettingsService(deps.dataSource);
  const parts = new PartsService(deps.dataSource, settings, deps.events);
  const versions = new PartVersionsService(deps.dataSource, parts, deps.events);
  const maxBytes = config.IMPORT_MAX_MB * 1024 * 1024;
  const imports = new PartImportService(deps.dataSource, settings, deps.events, deps.logger, {
    maxBytes,
    maxRows: config.IMPORT_MAX_ROWS,
    timeoutMs: config.IMPORT_TIMEOUT_MS,
    concurrency: config.IMPORT_CONCURRENCY,
    queueWaitMs: config.IMPORT_QUEUE_WAIT_MS,
  });
  mountPartImportRoute(routing, imports, maxBytes);
  // One file per use case under routes/; this order is the order of the OpenAPI document.
  for (const mount of [createPart, listParts, partDetail, updatePart]) mount(routing, parts);
  for (const mount of [
    createVersion,
    listVersions,
    editVersion,
    submitVersion,
    approveVersion,
    rejectVersion,
  ])
    mount(routing, versions);
  whereUsed(routing, parts);
  getBomSettings(routing, settings);
  updateBomSettings(routing, settings);

  return { parts, versions, settings, imports } satisfies PartsModule;
}
