import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource } from 'typeorm';
import type { MessageTransport } from './bus';
import { type BusLogger, describeError, silentLogger } from './logger';

export interface OutboxRelayOptions {
  dataSource: DataSource;
  transport: MessageTransport;
  logger?: BusLogger;
  /** Poll interval when idle (default 250 ms). */
  intervalMs?: number;
  /** Rows claimed per transaction (default 50). */
  batchSize?: number;
  /** Upper bound of the back-off after a failed publish (default 5000 ms). */
  maxBackoffMs?: number;
}

export interface RelayBatchResult {
  published: number;
  failed: boolean;
}

interface OutboxRow {
  id: string;
  envelope: EventEnvelope | string;
}

const MAX_ERROR_LENGTH = 2000;

/**
 * Publishes committed outbox rows. Each batch claims rows with `FOR UPDATE SKIP LOCKED`, so several
 * replicas can run a relay on one database without publishing a row twice at the same time; a row is
 * marked published only after the broker confirmed it. A crash between confirm and commit publishes
 * the row again later, which consumers absorb through their inbox.
 */
export class OutboxRelay {
  private readonly dataSource: DataSource;
  private readonly transport: MessageTransport;
  private readonly logger: BusLogger;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxBackoffMs: number;

  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private rerun = false;
  private consecutiveFailures = 0;

  constructor(options: OutboxRelayOptions) {
    this.dataSource = options.dataSource;
    this.transport = options.transport;
    this.logger = options.logger ?? silentLogger;
    this.intervalMs = options.intervalMs ?? 250;
    this.batchSize = options.batchSize ?? 50;
    this.maxBackoffMs = options.maxBackoffMs ?? 5000;
  }

  isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.consecutiveFailures = 0;
    this.schedule(0);
  }

  /** Stops polling and waits for the batch in flight, if any. */
  async stop(): Promise<void> {
    this.running = false;
    this.clearTimer();
    while (this.inFlight) await this.inFlight;
  }

  /** Publishes now instead of at the next tick; call it after committing a transaction that added events. */
  nudge(): void {
    if (!this.running) return;
    // While backing off the broker is known to be away; hammering it on every commit would not help.
    if (this.consecutiveFailures > 0) return;
    if (this.inFlight) {
      this.rerun = true;
      return;
    }
    this.schedule(0);
  }

  /** One claim-publish-mark transaction. Exposed for tests and one-off drains; the loop calls it too. */
  async runOnce(): Promise<RelayBatchResult> {
    return this.dataSource.transaction(async (manager) => {
      const rows: OutboxRow[] = await manager.query(
        `SELECT id, envelope FROM outbox
          WHERE published_at IS NULL
          ORDER BY created_at, id
          LIMIT $1
          FOR UPDATE SKIP LOCKED`,
        [this.batchSize],
      );
      let published = 0;
      for (const row of rows) {
        const envelope: EventEnvelope =
          typeof row.envelope === 'string' ? (JSON.parse(row.envelope) as EventEnvelope) : row.envelope;
        try {
          await this.transport.publish(envelope);
        } catch (error) {
          const message = describeError(error).slice(0, MAX_ERROR_LENGTH);
          await manager.query('UPDATE outbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1', [
            row.id,
            message,
          ]);
          this.logger.warn(
            { eventId: row.id, type: envelope.type, err: message },
            'outbox publish failed; will retry',
          );
          // Later rows would most likely fail the same way, and keeping order matters more than progress.
          return { published, failed: true };
        }
        await manager.query(
          'UPDATE outbox SET published_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = $1',
          [row.id],
        );
        published++;
      }
      return { published, failed: false };
    });
  }

  /** Deletes published rows older than `olderThanMs`; returns how many went. */
  async purgePublished(olderThanMs: number): Promise<number> {
    const result: [unknown[], number] = await this.dataSource.query(
      `DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < now() - ($1::bigint * interval '1 millisecond')`,
      [olderThanMs],
    );
    return result[1];
  }

  private schedule(delayMs: number): void {
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick();
    }, delayMs);
  }

  private clearTimer(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  private tick(): void {
    if (!this.running || this.inFlight) return;
    this.rerun = false;
    this.inFlight = this.runOnce()
      .then(
        (result) => this.afterBatch(result.failed, result.published),
        (error: unknown) => {
          this.logger.error({ err: describeError(error) }, 'outbox relay batch failed');
          this.afterBatch(true, 0);
        },
      )
      .finally(() => {
        this.inFlight = null;
      });
  }

  private afterBatch(failed: boolean, published: number): void {
    if (failed) {
      this.consecutiveFailures++;
    } else if (this.consecutiveFailures > 0) {
      this.logger.info({ afterFailures: this.consecutiveFailures }, 'outbox relay publishing again');
      this.consecutiveFailures = 0;
    }
    if (!this.running) return;
    if (failed) {
      const backoff = Math.min(
        this.maxBackoffMs,
        this.intervalMs * 2 ** Math.min(this.consecutiveFailures, 16),
      );
      this.schedule(backoff);
    } else if (published === this.batchSize || this.rerun) {
      // A full batch suggests more rows are waiting; a nudge during the batch may have added one.
      this.schedule(0);
    } else {
      this.schedule(this.intervalMs);
    }
  }
}
