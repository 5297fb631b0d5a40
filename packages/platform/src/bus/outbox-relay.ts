import type { DataSource } from 'typeorm';
import type { MessageTransport } from './bus';
import { type BusLogger, describeError, guardLogger, silentLogger } from './logger';
import {
  type BatchOutcome,
  MAX_ERROR_LENGTH,
  OutboxBatches,
  RelayBatchError,
  type RelayBatchResult,
} from './outbox-batch';

export { RelayBatchError, type RelayBatchResult } from './outbox-batch';

export interface OutboxRelayOptions {
  dataSource: DataSource;
  transport: MessageTransport;
  logger?: BusLogger;
  /** Poll interval when idle (default 250 ms). */
  intervalMs?: number;
  /** Rows claimed per transaction (default 50). */
  batchSize?: number;
  /** Upper bound of the back-off after a failed batch (default 5000 ms). */
  maxBackoffMs?: number;
  /**
   * Upper bound of the back-off when the broker refused a publish but the database answered (default
   * 1000 ms, never above maxBackoffMs): a RabbitMQ node going away leaves its quorum queues without a
   * leader for a few seconds, nacking publishes; a 5 s back-off grown meanwhile held delivery back for
   * seconds after the new leader was elected.
   */
  maxPublishBackoffMs?: number;
  /** `statement_timeout` of the batch transaction: a query stuck on a lock or a slow trigger fails (default 5000 ms). */
  statementTimeoutMs?: number;
  /** How long one publish may wait for the broker's confirm (default 10000 ms). */
  publishTimeoutMs?: number;
  /**
   * Whole batch, as seen from this process (default 30000 ms): covers what the server cannot time out,
   * such as a connection that stopped answering. The batch's connection is then closed, which rolls it back.
   */
  batchTimeoutMs?: number;
}

/** What the relay knows about its own progress; read by the readiness check. */
export interface RelayStatus {
  running: boolean;
  /** Failed batches in a row (0 when the last one went through). */
  consecutiveFailures: number;
  /** Why the last batch failed, while failures last. */
  lastError: string | null;
  /** When the loop last finished a batch (ms since epoch); null before the first. */
  lastBatchAt: number | null;
}

/**
 * Publishes committed outbox rows. Each batch claims rows with `FOR UPDATE SKIP LOCKED`, so several
 * replicas can run a relay on one database without publishing a row twice at the same time; a row is
 * marked published only after the broker confirmed it. A crash between confirm and commit publishes
 * the row again later, which consumers absorb through their inbox.
 *
 * The loop never ends on its own: every batch settles within `batchTimeoutMs`, every failure (database,
 * broker, even the logger) is logged and followed by a capped back-off, and only stop() ends it.
 */
export class OutboxRelay {
  private readonly dataSource: DataSource;
  private readonly logger: BusLogger;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxBackoffMs: number;
  private readonly maxPublishBackoffMs: number;
  private readonly batches: OutboxBatches;

  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private rerun = false;
  private consecutiveFailures = 0;
  private lastError: string | null = null;
  private lastBatchAt: number | null = null;

  constructor(options: OutboxRelayOptions) {
    this.dataSource = options.dataSource;
    this.logger = guardLogger(options.logger ?? silentLogger);
    this.intervalMs = options.intervalMs ?? 250;
    this.batchSize = options.batchSize ?? 50;
    this.maxBackoffMs = options.maxBackoffMs ?? 5000;
    this.maxPublishBackoffMs = Math.min(this.maxBackoffMs, options.maxPublishBackoffMs ?? 1000);
    this.batches = new OutboxBatches({
      dataSource: options.dataSource,
      transport: options.transport,
      logger: this.logger,
      batchSize: this.batchSize,
      statementTimeoutMs: Math.max(1, Math.floor(options.statementTimeoutMs ?? 5000)),
      publishTimeoutMs: options.publishTimeoutMs ?? 10_000,
      batchTimeoutMs: options.batchTimeoutMs ?? 30_000,
    });
  }

  isRunning(): boolean {
    return this.running;
  }

  status(): RelayStatus {
    return {
      running: this.running,
      consecutiveFailures: this.consecutiveFailures,
      lastError: this.lastError,
      lastBatchAt: this.lastBatchAt,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.consecutiveFailures = 0;
    this.schedule(0);
  }

  /** Stops polling and waits for the batch in flight, if any (at most `batchTimeoutMs`). */
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

  /**
   * One claim-publish-mark transaction, settled within `batchTimeoutMs`. Exposed for tests and
   * one-off drains; the loop calls it too. Rejects when the database fails or the batch times out.
   */
  async runOnce(): Promise<RelayBatchResult> {
    const { published, failed } = await this.batches.run();
    return { published, failed };
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
    this.inFlight = this.batches
      .run()
      .catch((error: unknown): BatchOutcome => {
        const eventId = error instanceof RelayBatchError ? error.eventId : null;
        const message = describeError(error).slice(0, MAX_ERROR_LENGTH);
        this.logger.error({ eventId, err: message }, 'outbox relay batch failed; will retry');
        return { published: 0, failed: true, error: message };
      })
      .then((outcome) => this.afterBatch(outcome))
      .catch((error: unknown) => {
        // Whatever broke the bookkeeping, the loop goes on.
        this.logger.error({ err: describeError(error) }, 'outbox relay loop error; continuing');
        if (this.running) this.schedule(this.maxBackoffMs);
      })
      .finally(() => {
        this.inFlight = null;
      });
  }

  private afterBatch(outcome: BatchOutcome): void {
    this.lastBatchAt = Date.now();
    if (outcome.failed) {
      this.consecutiveFailures++;
      this.lastError = outcome.error ?? 'publish failed';
    } else if (this.consecutiveFailures > 0) {
      this.logger.info({ afterFailures: this.consecutiveFailures }, 'outbox relay publishing again');
      this.consecutiveFailures = 0;
      this.lastError = null;
    }
    if (!this.running) return;
    if (outcome.failed) {
      const backoff = Math.min(
        outcome.publishRefused ? this.maxPublishBackoffMs : this.maxBackoffMs,
        this.intervalMs * 2 ** Math.min(this.consecutiveFailures, 16),
      );
      this.schedule(backoff);
    } else if (outcome.published === this.batchSize || this.rerun) {
      // A full batch suggests more rows are waiting; a nudge during the batch may have added one.
      this.schedule(0);
    } else {
      this.schedule(this.intervalMs);
    }
  }
}
