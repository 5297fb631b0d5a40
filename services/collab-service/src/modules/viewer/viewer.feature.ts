import { corsOrigins, defineFeature, ownPublicUrl } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import { servingCors } from '../shared-files/file-serving';
import type { SharedFilesExports } from '../shared-files/shared-files.feature';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import { CreateModelTranslations1764400000000 } from './migrations/1764400000000-CreateModelTranslations';
import { TranslationLease1764800000000 } from './migrations/1764800000000-TranslationLease';
import { lookupModel, serveModel, statusMap, translateFile } from './routes/viewer.routes';
import { viewerEntities } from './translation.entity';
import { TranslationWorker } from './translation-worker';
import { TranslationsService } from './translations.service';

export interface ViewerExports {
  translations: TranslationsService;
  worker: TranslationWorker;
}

/** Model translation for the web viewer (section 4.9): jobs on the bus, GLBs in the blob store. */
export const viewerFeature = defineFeature<
  CollabConfig,
  ViewerExports,
  { events: EventsModule; 'workspace-access': WorkspaceAccessExports; 'shared-files': SharedFilesExports }
>({
  name: 'viewer',
  entities: viewerEntities,
  migrations: [CreateModelTranslations1764400000000, TranslationLease1764800000000],
  build: (deps, { events, 'workspace-access': access, 'shared-files': shared }) => {
    const { config, dataSource, bus, blobs, logger } = deps;
    const translations = new TranslationsService(
      dataSource,
      blobs,
      shared.files,
      events.events,
      bus,
      shared.signer,
      {
        maxBytes: config.TRANSLATION_MAX_MB * 1024 * 1024,
        branchSuffixWrites: config.BRANCH_SUFFIX_WRITES,
        queuePerUser: config.TRANSLATION_QUEUE_PER_USER,
        publicBase: ownPublicUrl(config),
      },
    );
    const worker = new TranslationWorker(
      dataSource,
      blobs,
      bus,
      translations,
      logger.child({ module: 'viewer' }),
      {
        concurrency: config.TRANSLATION_CONCURRENCY,
        timeoutMs: config.TRANSLATION_TIMEOUT_MS,
        leaseMs: config.TRANSLATION_LEASE_MS,
        memoryMb: config.TRANSLATION_MEMORY_MB,
        time: deps.metrics.time,
      },
    );
    translations.onStalled = (id) => {
      worker
        .sweepStale([id])
        .catch((error: unknown) => logger.warn({ err: error }, 'translation requeue failed'));
    };
    return {
      routes: access.routes([
        translateFile(translations),
        statusMap(translations),
        lookupModel(translations),
        ...serveModel(translations, servingCors(corsOrigins(config))),
      ]),
      consumers: () => {
        deps.lifecycle.onShutdown('translation-sweep', async () => worker.stopSweeping());
        return worker.register();
      },
      exports: { translations, worker },
    };
  },
});
