import { type Bus, type Logger, newId } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { FileEvents } from '../shared-files/file-guards';
import { type DueItem, dueReviewsAcrossWorkspaces } from './reviews.repository';
import { notifyByEmail } from './reviews.service';
import { dueTasksAcrossWorkspaces } from './tasks.repository';

/** The key of `pg_try_advisory_xact_lock` that this scan holds, in whichever replica runs it. */
const SCAN_LOCK = 'collab.due-soon-scan';
const BATCH = 500;

/**
 * Reviews and tasks that come due within `DUE_SOON_HOURS` get one notice: an email to the reviewer
 * (a review) or the owner, else the creator (a task), and a `review`/`task` event. Safe with several
 * replicas: one scan runs at a time (a transaction-scoped advisory lock; the others skip), rows
 * being changed are skipped (`FOR UPDATE SKIP LOCKED`) and caught by the next scan, and the notice
 * is marked in the same transaction as its outbox rows, so it goes out exactly once.
 */
export class DueSoonScanner {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: FileEvents,
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly options: { withinHours: number; everyMs: number },
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      if (!this.dataSource.isInitialized) {
        this.stop();
        return;
      }
      this.scan().catch((error: unknown) => this.log.warn({ err: error }, 'due-soon scan failed'));
    }, this.options.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One scan; how many notices it sent, or null when another replica holds the scan. */
  async scan(): Promise<{ reviews: number; tasks: number } | null> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }]: { locked: boolean }[] = await manager.query(
        'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked',
        [SCAN_LOCK],
      );
      if (!locked) return null;
      const reviews = await dueReviewsAcrossWorkspaces(manager, this.options.withinHours, BATCH);
      for (const row of reviews) {
        await this.notify(
          manager,
          row,
          'review',
          { action: 'due_soon', reviewId: row.id, dueAt: row.due_at.toISOString() },
          {
            subject: `Review of ${row.path} is due ${row.due_at.toISOString()}`,
            text: `The review of ${row.path} in the workspace "${row.workspace}" is due ${row.due_at.toISOString()}.`,
          },
        );
      }
      const tasks = await dueTasksAcrossWorkspaces(manager, this.options.withinHours, BATCH);
      for (const row of tasks) {
        await this.notify(
          manager,
          row,
          'task',
          { action: 'due_soon', taskId: row.id, dueAt: row.due_at.toISOString() },
          {
            subject: `"${row.title}" is due ${row.due_at.toISOString()}`,
            text: `The task "${row.title}" on ${row.path} in the workspace "${row.workspace}" is due ${row.due_at.toISOString()}.`,
          },
        );
      }
      if (reviews.length + tasks.length > 0)
        this.log.info({ reviews: reviews.length, tasks: tasks.length }, 'due-soon notices sent');
      return { reviews: reviews.length, tasks: tasks.length };
    });
  }

  private async notify(
    manager: EntityManager,
    row: DueItem,
    type: 'review' | 'task',
    data: Record<string, unknown>,
    mail: { subject: string; text: string },
  ): Promise<void> {
    const workspace = { id: row.workspace_id, name: row.workspace };
    await notifyByEmail(this.bus, manager, workspace, 'system', {
      channel: 'email',
      to: row.to_email,
      template: `${type}.due_soon`,
      ...mail,
      vars: { workspace: row.workspace, path: row.path, [`${type}Id`]: row.id, noticeId: newId() },
    });
    await this.events.emit(manager, workspace, type, data, { actor: 'system', path: row.path });
  }
}
