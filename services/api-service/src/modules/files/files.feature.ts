import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import type { AuthModule } from '../auth/auth.module';
import type { TenancyExports } from '../tenancy/tenancy.feature';
import { createTenantResolver } from '../tenancy/tenant-context';
import { AnnotationsService } from './annotations.service';
import { ClamdClient } from './clamd';
import { fileEntities } from './file.entity';
import { FileAccessTokens } from './file-access-tokens';
import { FileProcessor } from './file-processing';
import { FileUploadEntity } from './file-upload.entity';
import { FilesService } from './files.service';
import { LargeUploads } from './large-uploads';
import { CreateFiles1764000000000 } from './migrations/1764000000000-CreateFiles';
import { CreateFileUploads1764000000100 } from './migrations/1764000000100-CreateFileUploads';
import { AddProcessingDeadline1764800000100 } from './migrations/1764800000100-AddProcessingDeadline';
import { ProcessingSweep } from './processing-sweep';
import {
  createAnnotation,
  listAnnotations,
  moveAnnotation,
  replyToAnnotation,
} from './routes/annotations.routes';
import { cadMetadata, previewImage } from './routes/derived.routes';
import { downloadFile } from './routes/download.routes';
import { fileRouting } from './routes/file-routing';
import { accessToken, deleteFile, getFile, listFiles, setPermissions } from './routes/files.routes';
import { uploadComplete, uploadUrl } from './routes/large-upload.routes';
import { getRevision, listRevisions, revertFile } from './routes/revisions.routes';
import { mountSharedRoutes } from './routes/shared.routes';
import { uploadFile, uploadFiles } from './routes/upload.routes';

export interface FilesExports {
  files: FilesService;
  largeUploads: LargeUploads;
  processor: FileProcessor;
  sweep: ProcessingSweep;
  annotations: AnnotationsService;
}

/** Engineering files of a tenant (section 4.3): uploads, revisions, downloads, permissions, annotations. */
export const filesFeature = defineFeature<
  ApiConfig,
  FilesExports,
  { tenancy: TenancyExports; auth: AuthModule }
>({
  name: 'files',
  entities: [...fileEntities, FileUploadEntity],
  migrations: [CreateFiles1764000000000, CreateFileUploads1764000000100, AddProcessingDeadline1764800000100],
  build: (deps, { tenancy, auth }) => {
    const { dataSource, bus, blobs, config } = deps;
    const files = new FilesService(dataSource, bus, blobs, tenancy.tenants);
    const annotations = new AnnotationsService(dataSource, files);
    const largeUploads = new LargeUploads(blobs, files, config.MAX_UPLOAD_MB * 1024 * 1024);
    const tokens = new FileAccessTokens(auth.secret, (sessionId, userId) =>
      auth.sessions.isAlive(sessionId, userId),
    );
    const maxBytes = config.MAX_UPLOAD_MB * 1024 * 1024;
    // With a virus scanner configured, only scanned bytes leave (fail closed).
    const downloads = { blobs, requireScan: Boolean(config.CLAMD_HOST) };
    const processor = new FileProcessor(dataSource, bus, blobs, deps.logger, {
      clamd: config.CLAMD_HOST ? new ClamdClient(config.CLAMD_HOST, config.CLAMD_PORT) : undefined,
      maxAnalysisBytes: config.PROCESSING_MAX_MB * 1024 * 1024,
      concurrency: config.PROCESSING_CONCURRENCY,
      window: Math.max(config.PROCESSING_WINDOW, config.PROCESSING_CONCURRENCY),
      time: deps.metrics.time,
    });
    const sweep = new ProcessingSweep(dataSource, bus, deps.logger, {
      stuckAfterMs: config.PROCESSING_STUCK_AFTER_MS,
      maxRequeues: config.PROCESSING_MAX_REQUEUES,
    });
    const startSweeping = () => {
      const timer = setInterval(() => {
        sweep.run().catch((error: unknown) => deps.logger.warn({ err: error }, 'processing sweep failed'));
        largeUploads
          .sweepExpired(dataSource)
          .catch((error: unknown) => deps.logger.warn({ err: error }, 'expired upload sweep failed'));
      }, config.PROCESSING_SWEEP_MS);
      timer.unref();
      deps.lifecycle.onShutdown('processing-sweep', async () => clearInterval(timer));
    };
    const signedIn = [
      auth.authenticate,
      auth.standardLimit,
      createTenantResolver(dataSource, tenancy.tenants),
    ];
    return {
      routes: [
        (api) => {
          const routing = fileRouting(api, { files, signedIn });
          // This order is the order of the OpenAPI document.
          uploadFile(routing, blobs, maxBytes);
          uploadFiles(routing, blobs, maxBytes);
          uploadUrl(routing, largeUploads);
          uploadComplete(routing, largeUploads);
          listFiles(routing);
          getFile(routing);
          deleteFile(routing);
          downloadFile(routing, downloads, tokens, auth.standardLimit);
          accessToken(routing, tokens);
          cadMetadata(routing);
          previewImage(routing, blobs, 'preview');
          previewImage(routing, blobs, 'thumbnail');
          setPermissions(routing);
          listRevisions(routing);
          getRevision(routing);
          revertFile(routing);
          createAnnotation(routing, annotations);
          listAnnotations(routing, annotations);
          replyToAnnotation(routing, annotations);
          moveAnnotation(routing, annotations);
          mountSharedRoutes(api, files, downloads, [auth.authenticate, auth.standardLimit]);
        },
      ],
      consumers: async () => {
        await processor.register();
        startSweeping();
      },
      health: { processing: () => sweep.health() },
      exports: { files, largeUploads, annotations, processor, sweep },
    };
  },
});
