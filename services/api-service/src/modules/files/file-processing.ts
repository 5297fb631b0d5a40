import {
  type FileClassification,
  type FileMetadata,
  type FileProcessedData,
  type FileUploadedData,
  type ProcessingStatus,
  RoutingKeys,
} from '@hwp/contracts';
import type { BlobStore, Bus, JobTimer, Logger } from '@hwp/platform';
import { BlobNotFoundError, checkedEvent } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { TenantScope } from '../tenancy/tenant-scope';
import { analyzeContent, type ContentAnalysis, type ScanResult, scanContent } from './analysis';
import { classify } from './analysis/sniff';
import type { ClamdClient } from './clamd';
import { FairSlots } from './fair-slots';
import { FileRevisionEntity } from './file.entity';
import { extensionOf } from './file-names';
import { FilesRepository } from './files.repository';

/** The stages of section 4.3, in order; each records its result on the revision when done. */
export const STAGES = ['scan', 'metadata', 'preview', 'index', 'classification'] as const;
export type Stage = (typeof STAGES)[number];

/** `file.processed.v1`: processing of a revision ended. */
export interface ProcessingOptions {
  clamd?: ClamdClient;
  /** Files larger than this get no content analysis. */
  maxAnalysisBytes: number;
  /** Files processed at once by this process (the work is CPU and memory bound). */
  concurrency: number;
  /**
   * Processing events taken from the queue at once (prefetch), at least `concurrency`: the fair turns
   * choose among these, so a tenant's batch larger than this still queues ahead of later tenants in
   * the broker.
   */
  window: number;
  /** Times each processing run (metrics). */
  time: JobTimer;
}

const DONE: readonly ProcessingStatus[] = ['ready', 'quarantined', 'failed'];

export const previewPrefix = (tenantId: string) => `tenants/${tenantId}/previews/`;

/** Where a revision's preview images live (under the tenant's prefix, named by ids). */
export function previewKey(tenantId: string, revisionId: string, kind: 'preview' | 'thumbnail'): string {
  return `${previewPrefix(tenantId)}${revisionId}/${kind}.png`;
}

/** What the slow part of processing found, for the short transaction that records it. */
interface Processed {
  revision: FileRevisionEntity;
  status: ProcessingStatus;
  /** Why it failed, when it did. */
  error?: string;
}

/**
 * The processing pipeline (`file.uploaded.v1` -> `file.processed.v1`): scan, metadata, preview,
 * index, classification. Idempotent per revision: a revision that finished is left alone, and each
 * stage's result is committed as it is done, so a redelivery or a restart resumes where it stopped.
 * The stages run with no database connection held between their writes; only the final status, the
 * search index and `file.processed.v1` are written in the consumer's (inbox) transaction. At most
 * `concurrency` files at once per process, taken round-robin by tenant.
 */
export class FileProcessor {
  private readonly slots: FairSlots;

  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly blobs: BlobStore,
    private readonly logger: Logger,
    private readonly options: ProcessingOptions,
  ) {
    this.slots = new FairSlots(options.concurrency);
  }

  register(): Promise<void> {
    return this.bus.subscribeStaged<Processed>(
      {
        consumer: 'file-processing',
        patterns: [RoutingKeys.fileUploaded],
        // Many more than run at once, so the fair turns have every tenant's waiting files to choose
        // from, not only those of the tenant that queued a batch first. Waiting ones hold nothing.
        prefetch: this.options.window,
      },
      {
        prepare: (event) => {
          const tenantId = event.tenantId ?? '';
          return this.slots.run(tenantId, () =>
            this.options.time('file_processing', () =>
              this.prepare(tenantId, checkedEvent(event, [RoutingKeys.fileUploaded]).data),
            ),
          );
        },
        commit: (event, manager, processed) => this.commit(event.tenantId ?? '', manager, processed),
      },
    );
  }

  /** Scans and analyses a revision, recording each stage as it ends; null when there is nothing to do. */
  async prepare(tenantId: string, data: FileUploadedData): Promise<Processed | null> {
    const scope = new TenantScope(this.dataSource.manager, tenantId);
    const revisions = scope.repo(FileRevisionEntity);
    const revision = await revisions.findOne({ id: data.revisionId });
    // Deleted meanwhile, or already processed (a redelivery, or a revert that copied the results).
    if (!revision || DONE.includes(revision.processingStatus)) return null;
    if (revision.processingStatus === 'pending')
      await revisions.update({ id: revision.id }, { processingStatus: 'processing' });

    /** Records a stage's result on the revision; false when the revision is gone (its file deleted). */
    const record = async (stage: Stage, result: Record<string, unknown>) => {
      revision.stages = { ...revision.stages, [stage]: result };
      return (await revisions.update({ id: revision.id }, { stages: revision.stages })) > 0;
    };
    let status: ProcessingStatus = 'ready';
    try {
      let scan = revision.stages.scan as ScanResult | undefined;
      if (!scan) {
        scan = await scanContent(this.blobs, revision, this.options.clamd);
        await record('scan', scan as unknown as Record<string, unknown>);
      }
      if (scan.verdict !== 'clean') {
        status = 'quarantined';
        // What it is can still be said (from the first bytes); nothing else is read out of it.
        revision.classification = classify(scan.detected, extensionOf(revision.name));
      } else {
        const analysis = await this.analysis(revision, record, tenantId);
        if (analysis.rejected) {
          revision.classification = analysis.classification;
          return { revision, status: 'failed', error: analysis.rejected };
        }
        if (!revision.stages.index) {
          // The text goes in now; the search vector is rebuilt with the final metadata below.
          await revisions.update({ id: revision.id }, { textContent: analysis.text ?? null });
          await record('index', { textChars: analysis.text?.length ?? 0 });
        }
        if (!revision.stages.classification)
          await record('classification', { classification: analysis.classification });
        revision.metadata = analysis.metadata;
        revision.classification = analysis.classification;
      }
    } catch (error) {
      // clamd unreachable and the like: retried by the bus, never marked clean.
      if (!(error instanceof BlobNotFoundError)) throw error;
      return { revision, status: 'failed', error: 'The stored content is missing' };
    }
    return { revision, status };
  }

  /** Records the outcome in the consumer's transaction: status, search index, `file.processed.v1`. */
  async commit(
    tenantId: string,
    manager: EntityManager,
    { revision, status, error }: Processed,
  ): Promise<void> {
    const inTransaction = new TenantScope(manager, tenantId);
    await inTransaction.repo(FileRevisionEntity).update(
      { id: revision.id },
      {
        processingStatus: status,
        processingError: error ?? null,
        metadata: revision.metadata,
        classification: revision.classification,
      },
    );
    await new FilesRepository(inTransaction, manager).reindex(revision.fileId);
    const processed: FileProcessedData = {
      fileId: revision.fileId,
      revisionId: revision.id,
      status,
      classification: revision.classification,
    };
    await this.bus.outbox.add(manager, {
      type: RoutingKeys.fileProcessed,
      tenantId,
      actor: 'system',
      data: processed,
    });
    this.logger.info({ fileId: revision.fileId, revisionId: revision.id, status }, 'file processed');
  }

  /** Metadata and preview stages (each run once), from one read of the content. */
  private async analysis(
    revision: FileRevisionEntity,
    record: (stage: Stage, result: Record<string, unknown>) => Promise<boolean>,
    tenantId: string,
  ): Promise<ContentAnalysis> {
    const done = revision.stages.metadata as
      | { metadata: FileMetadata; classification: FileClassification }
      | undefined;
    const analysis = await analyzeContent(this.blobs, revision, {
      maxBytes: this.options.maxAnalysisBytes,
      // The previews are written once; a resumed run only re-reads what the later stages need.
      renderPreview: !revision.stages.preview,
    });
    if (analysis.rejected) return analysis;
    if (!done)
      await record('metadata', { metadata: analysis.metadata, classification: analysis.classification });
    if (!revision.stages.preview) {
      const stored: Record<string, string> = {};
      for (const kind of ['preview', 'thumbnail'] as const) {
        const png = analysis.previews?.[kind];
        if (!png) continue;
        const key = previewKey(tenantId, revision.id, kind);
        await this.blobs.put(key, png, { contentType: 'image/png' });
        stored[kind] = key;
      }
      if (!(await record('preview', stored))) {
        // The file was deleted while its previews were drawn, after its delete removed their keys.
        for (const key of Object.values(stored)) await this.blobs.delete(key).catch(() => undefined);
      }
    }
    return done ? { ...analysis, metadata: done.metadata, classification: done.classification } : analysis;
  }
}
