import type { EventEnvelope } from '@hwp/contracts';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { parentContext, traced } from '../tracing';
import type { MessageTransport } from './bus';
import { type BusLogger, describeError } from './logger';
import { TimeoutError, withDeadline } from './timeouts';

export interface RelayBatchResult {
  published: number;
  failed: boolean;
}

export interface OutboxBatchSettings {
  dataSource: DataSource;
  transport: MessageTransport;
  /** Must not throw (see guardLogger). */
  logger: BusLogger;
  batchSize: number;
  statementTimeoutMs: number;
  publishTimeoutMs: number;
  batchTimeoutMs: number;
}

/** pg's client as TypeORM's query runner hands it out: a multi-statement query answers one result each. */
interface PgClient {
  query(text: string): Promise<{ rows: unknown[] }[]>;
}

interface OutboxRow {
  id: string;
  envelope: EventEnvelope | string;
}

export interface BatchOutcome extends RelayBatchResult {
  error?: string;
  /**
   * The database was fine and the broker did not take a row (a nack, no confirm in time, no
   * connection): worth retrying soon, as a quorum queue whose leader node went is back within seconds.
   */
  publishRefused?: boolean;
}

/** A batch that failed (database error or timeout); names the row it was working on, if any. */
export class RelayBatchError extends Error {
  constructor(
    readonly eventId: string | null,
    cause: unknown,
  ) {
    super(describeError(cause), { cause });
    this.name = 'RelayBatchError';
  }
}

export const MAX_ERROR_LENGTH = 2000;
/** Ids confirmed by the broker whose row could not be marked yet; bounded so it never grows unchecked. */
const MAX_CONFIRMED_UNMARKED = 10_000;

/**
 * The outbox relay's unit of work: claims rows with `FOR UPDATE SKIP LOCKED`, publishes them in order
 * and marks them, all in one transaction bounded three ways (statement timeout, publish timeout, batch
 * deadline), so it always settles.
 */
export class OutboxBatches {
  /**
   * Rows the broker has confirmed but whose `published_at` did not commit (the database failed after
   * the publish). The next batch only marks them instead of publishing them again.
   */
  private readonly confirmedUnmarked = new Set<string>();

  constructor(private readonly settings: OutboxBatchSettings) {}

  /** One claim-publish-mark transaction, settled within `batchTimeoutMs`; rejects with a RelayBatchError. */
  async run(): Promise<BatchOutcome> {
    if (!(await this.anyPending())) return { published: 0, failed: false };
    let runner: QueryRunner | undefined;
    const marked: string[] = [];
    const progress = { eventId: null as string | null, abandoned: false };
    const batch = this.settings.dataSource.transaction(async (manager) => {
      runner = manager.queryRunner;
      return this.publishBatch(manager, marked, progress);
    });
    try {
      const outcome = await withDeadline(batch, this.settings.batchTimeoutMs, 'outbox relay batch');
      for (const id of marked) this.confirmedUnmarked.delete(id);
      return outcome;
    } catch (error) {
      if (error instanceof TimeoutError) {
        progress.abandoned = true;
        this.abandon(batch, runner);
      }
      // The row being worked on names the failure in the log; the batch's other rows wait with it.
      throw new RelayBatchError(progress.eventId, error);
    }
  }

  /**
   * Whether a row waits. Idle is the relay's usual state, polled every `OUTBOX_POLL_MS` by each
   * replica: one round trip answers it (the partial index on unpublished rows), where a batch is four.
   * The two statements go as one simple query, which Postgres runs as one implicit transaction, so
   * SET LOCAL bounds the read as it bounds a batch's statements. Within `batchTimeoutMs` like a batch.
   */
  private async anyPending(): Promise<boolean> {
    const runner = this.settings.dataSource.createQueryRunner();
    const probe = runner.connect().then((client: PgClient) =>
      client.query(
        `SET LOCAL statement_timeout = ${this.settings.statementTimeoutMs};
           SELECT 1 FROM outbox WHERE published_at IS NULL LIMIT 1`,
      ),
    );
    const release = () => runner.release();
    probe.then(release, release).catch(() => undefined);
    try {
      const results = await withDeadline(probe, this.settings.batchTimeoutMs, 'outbox relay batch');
      return results[1].rows.length > 0;
    } catch (error) {
      if (error instanceof TimeoutError) this.abandon(probe, runner);
      throw new RelayBatchError(null, error);
    }
  }

  private async publishBatch(
    manager: EntityManager,
    marked: string[],
    progress: { eventId: string | null; abandoned: boolean },
  ): Promise<BatchOutcome> {
    // A batch given up on while it waited for a connection must not wake up later and do work.
    const check = (): void => {
      if (progress.abandoned) throw new Error('outbox batch abandoned after its timeout');
    };
    check();
    // Server-side bound on each statement, so a lock wait or a stuck trigger fails the batch instead of
    // holding it; SET LOCAL ends with the transaction and leaves the pooled connection as it was.
    await manager.query(`SET LOCAL statement_timeout = ${this.settings.statementTimeoutMs}`);
    const rows: OutboxRow[] = await manager.query(
      `SELECT id, envelope FROM outbox
        WHERE published_at IS NULL
        ORDER BY created_at, id
        LIMIT $1
        FOR UPDATE SKIP LOCKED`,
      [this.settings.batchSize],
    );
    let published = 0;
    for (const row of rows) {
      check();
      progress.eventId = row.id;
      const envelope: EventEnvelope =
        typeof row.envelope === 'string' ? (JSON.parse(row.envelope) as EventEnvelope) : row.envelope;
      if (!this.confirmedUnmarked.has(row.id)) {
        try {
          await withDeadline(
            traced(
              `publish ${envelope.type}`,
              'producer',
              parentContext(envelope.traceparent),
              {
                'messaging.system': this.settings.transport.kind === 'amqp' ? 'rabbitmq' : 'in-process',
                'messaging.destination.name': envelope.type,
                'messaging.message.id': envelope.id,
              },
              () => Promise.resolve().then(() => this.settings.transport.publish(envelope)),
            ),
            this.settings.publishTimeoutMs,
            `publish of ${envelope.type} ${row.id}`,
          );
          this.settings.transport.observer?.published(envelope.type);
        } catch (error) {
          const message = describeError(error).slice(0, MAX_ERROR_LENGTH);
          await manager.query('UPDATE outbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1', [
            row.id,
            message,
          ]);
          this.settings.logger.warn(
            { eventId: row.id, type: envelope.type, err: message },
            'outbox publish failed; will retry',
          );
          // Later rows would most likely fail the same way, and keeping order matters more than progress.
          return { published, failed: true, error: message, publishRefused: true };
        }
        this.rememberConfirmed(row.id);
      }
      await manager.query(
        'UPDATE outbox SET published_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = $1',
        [row.id],
      );
      marked.push(row.id);
      published++;
    }
    progress.eventId = null;
    return { published, failed: false };
  }

  private rememberConfirmed(id: string): void {
    this.confirmedUnmarked.add(id);
    if (this.confirmedUnmarked.size > MAX_CONFIRMED_UNMARKED) {
      const oldest = this.confirmedUnmarked.values().next().value;
      if (oldest !== undefined) this.confirmedUnmarked.delete(oldest);
    }
  }

  /**
   * Gives up on a batch that did not settle in time. Ending its connection (pg destroys the socket of a
   * client with a query in flight) makes the server roll it back and frees the pool slot; the rows it
   * claimed are then free for the next batch, which may publish them again (the inbox absorbs that).
   */
  private abandon(batch: Promise<unknown>, runner: QueryRunner | undefined): void {
    batch.catch((error: unknown) =>
      this.settings.logger.debug({ err: describeError(error) }, 'abandoned outbox batch ended'),
    );
    // TypeORM's Postgres query runner keeps its pg client here; end() is pg's public API.
    const client = (runner as unknown as { databaseConnection?: { end(): Promise<void> } } | undefined)
      ?.databaseConnection;
    if (!client) return;
    Promise.resolve()
      .then(() => client.end())
      .catch((error: unknown) =>
        this.settings.logger.debug(
          { err: describeError(error) },
          'closing an abandoned batch connection failed',
        ),
      );
  }
}
