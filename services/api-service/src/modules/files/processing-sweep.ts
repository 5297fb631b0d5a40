import { type FileProcessedData, type FileUploadedData, RoutingKeys } from '@hwp/contracts';
import type { Bus, Logger } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import { TenantScope } from '../tenancy/tenant-scope';
import { FilesRepository } from './files.repository';

export interface SweepSettings {
  /** A revision still pending or processing this long after its attempt began has stalled. */
  stuckAfterMs: number;
  /** Stalled attempts requeued before the revision ends `failed`. */
  maxRequeues: number;
}

interface StalledRow {
  id: string;
  tenant_id: string;
  file_id: string;
  blob_key: string;
  size: string;
  sha256: string;
  mime_type: string;
  processing_requeues: number;
}

/** At most this many stalled revisions per sweep (the next sweep takes the rest). */
const BATCH = 100;

/**
 * Finds revisions whose processing stalled (their `file.uploaded.v1` was dead-lettered, the process
 * handling them was killed) and either requeues them (a new `file.uploaded.v1` through the outbox)
 * or, past `maxRequeues`, ends them `failed` with the reason: no file stays pending for good. Safe on
 * several replicas at once (rows are claimed with SKIP LOCKED).
 */
export class ProcessingSweep {
  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly settings: SweepSettings,
  ) {}

  async run(): Promise<{ requeued: number; failed: number }> {
    const outcome = { requeued: 0, failed: 0 };
    await this.bus.transaction(async (manager) => {
      const rows: StalledRow[] = await manager.query(
        `SELECT id, tenant_id, file_id, blob_key, size, sha256, mime_type, processing_requeues
           FROM file_revisions
          WHERE processing_status IN ('pending', 'processing')
            AND processing_since < now() - make_interval(secs => $1)
          ORDER BY processing_since
          LIMIT ${BATCH}
          FOR UPDATE SKIP LOCKED`,
        [this.settings.stuckAfterMs / 1000],
      );
      for (const row of rows) {
        if (row.processing_requeues >= this.settings.maxRequeues) {
          const reason = `Processing did not finish in ${row.processing_requeues + 1} attempts`;
          await manager.query(
            `UPDATE file_revisions SET processing_status = 'failed', processing_error = $2 WHERE id = $1`,
            [row.id, reason],
          );
          await new FilesRepository(new TenantScope(manager, row.tenant_id), manager).reindex(row.file_id);
          const data: FileProcessedData = {
            fileId: row.file_id,
            revisionId: row.id,
            status: 'failed',
            classification: null,
          };
          await this.bus.outbox.add(manager, {
            type: RoutingKeys.fileProcessed,
            tenantId: row.tenant_id,
            actor: 'system',
            data,
          });
          outcome.failed++;
          continue;
        }
        await manager.query(
          `UPDATE file_revisions SET processing_since = now(), processing_requeues = processing_requeues + 1
            WHERE id = $1`,
          [row.id],
        );
        const data: FileUploadedData = {
          fileId: row.file_id,
          revisionId: row.id,
          key: row.blob_key,
          size: Number(row.size),
          sha256: row.sha256,
          mimeType: row.mime_type,
        };
        await this.bus.outbox.add(manager, {
          type: RoutingKeys.fileUploaded,
          tenantId: row.tenant_id,
          actor: 'system',
          data,
        });
        outcome.requeued++;
      }
    });
    if (outcome.requeued || outcome.failed) this.logger.warn(outcome, 'stalled file processing swept');
    return outcome;
  }

  /** For /readyz: how many revisions are stalled right now (null when none). */
  async health(): Promise<string | null> {
    const [row]: { n: string }[] = await this.dataSource.query(
      `SELECT count(*) AS n FROM (
         SELECT 1 FROM file_revisions
          WHERE processing_status IN ('pending', 'processing')
            AND processing_since < now() - make_interval(secs => $1)
          LIMIT 1000) stalled`,
      [this.settings.stuckAfterMs / 1000],
    );
    const n = Number(row.n);
    return n === 0
      ? null
      : `${n === 1000 ? '1000 or more' : n} file(s) still processing ${Math.round(this.settings.stuckAfterMs / 1000)} s after their attempt began`;
  }
}
