import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import type { PartsExports } from '../parts';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import { bomEntities } from './bom.entity';
import { BomImportService } from './bom-import.service';
import { BomLinesService } from './bom-lines.service';
import { BomStructureService } from './bom-structure.service';
import { BomsService } from './boms.service';
import { CreateBoms1764100000000 } from './migrations/1764100000000-CreateBoms';
import { BomsChosenIndex1765100000000 } from './migrations/1765100000000-BomsChosenIndex';
import { exportCsv, exportErpCsv, exportXlsx, importBom } from './routes/bom-files.routes';
import {
  approveBom,
  bomDetail,
  bomDiff,
  costRollup,
  createBom,
  deriveMbom,
  listBoms,
  rejectBom,
  setAlternates,
  submitBom,
  upsertItems,
  validateEffectivity,
  whereUsed,
} from './routes/boms.routes';

export interface BomsExports {
  boms: BomsService;
  lines: BomLinesService;
  structure: BomStructureService;
}

/** Bills of material (section 4.7): trees, approval, diff, import, exports, cost rollup, alternates, effectivity, MBOM. */
export const bomsFeature = defineFeature<
  CollabConfig,
  BomsExports,
  { events: EventsModule; 'workspace-access': WorkspaceAccessExports; parts: PartsExports }
>({
  name: 'boms',
  entities: bomEntities,
  migrations: [CreateBoms1764100000000, BomsChosenIndex1765100000000],
  build: ({ dataSource, bus, config, metrics }, { events, 'workspace-access': access, parts }) => {
    const boms = new BomsService(dataSource, events.events, bus, parts.settings);
    const lines = new BomLinesService(dataSource, boms, config.BOM_MAX_REFDES);
    const structure = new BomStructureService(dataSource, boms);
    const maxBytes = config.IMPORT_MAX_MB * 1024 * 1024;
    const imports = new BomImportService(dataSource, boms, lines, parts.parts, {
      maxBytes,
      maxRows: config.IMPORT_MAX_ROWS,
      timeoutMs: config.IMPORT_TIMEOUT_MS,
      maxMemoryMb: config.IMPORT_MEMORY_MB,
      maxRefdes: config.BOM_MAX_REFDES,
    });
    return {
      // This order is the order of the OpenAPI document.
      routes: access.routes([
        importBom(imports, parts.imports, maxBytes, metrics.time),
        createBom(boms),
        listBoms(boms),
        bomDetail(boms),
        upsertItems(lines),
        submitBom(boms),
        approveBom(boms),
        rejectBom(boms),
        bomDiff(structure),
        exportCsv(boms),
        exportXlsx(boms),
        exportErpCsv(boms),
        costRollup(boms),
        setAlternates(lines),
        deriveMbom(structure),
        validateEffectivity(structure),
        whereUsed(structure),
      ]),
      exports: { boms, lines, structure },
    };
  },
});
