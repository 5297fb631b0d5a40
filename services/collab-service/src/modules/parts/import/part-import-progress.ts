import type { ImportProgressData, ImportReport } from '@hwp/contracts';
import type { Logger } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../../identity/collab-user.entity';
import type { WorkspaceScope } from '../../workspace-access/workspace-scope';
import type { PartEvents } from '../parts.service';

/**
 * `import.progress` events for the importing user, each in a transaction of its own, in order.
 * Sending never waits and never fails the import (a lost progress event is only a lost hint).
 */
export class ImportProgress {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: PartEvents,
    private readonly logger: Logger,
    private readonly access: WorkspaceScope,
    private readonly actor: CollabUserEntity,
    private readonly fixed: Pick<ImportProgressData, 'importId' | 'dryRun'>,
  ) {}

  data(
    phase: ImportProgressData['phase'],
    processed: number,
    counts?: Pick<ImportReport, 'rows' | 'created' | 'updated' | 'unchanged' | 'errorCount'>,
  ): ImportProgressData {
    const data: ImportProgressData = { ...this.fixed, kind: 'parts', phase, processed };
    if (counts) {
      data.total = counts.rows;
      data.created = counts.created;
      data.updated = counts.updated;
      data.unchanged = counts.unchanged;
      data.errorCount = counts.errorCount;
    }
    return data;
  }

  send(phase: ImportProgressData['phase'], processed: number, total?: number, detail?: string): void {
    const data = this.data(phase, processed);
    if (total !== undefined) data.total = total;
    if (detail !== undefined) data.detail = detail;
    this.chain = this.chain
      .then(() =>
        this.events.emit(this.dataSource.manager, this.access, 'import.progress', data, {
          actor: this.actor,
          to: this.actor,
        }),
      )
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.warn({ err: error, importId: this.fixed.importId }, 'import progress event not sent'),
      );
  }

  flush(): Promise<void> {
    return this.chain;
  }

  /** The last event, `done` with the report's counts, on `manager` (for an apply, its transaction). */
  async done(manager: EntityManager, report: ImportReport): Promise<void> {
    await this.events.emit(manager, this.access, 'import.progress', this.data('done', report.rows, report), {
      actor: this.actor,
      to: this.actor,
    });
  }
}
