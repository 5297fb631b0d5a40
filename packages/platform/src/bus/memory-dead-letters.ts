import type { EventEnvelope } from '@hwp/contracts';
import { type BusLogger, describeError } from './logger';
import { withDeadline } from './timeouts';

/** A message that exhausted its attempts or could not be decoded. */
export interface DeadLetter {
  /** Key of the stored row, fixed when the message died, so a retried write cannot store it twice. */
  id: string;
  queue: string;
  routingKey: string;
  /** Raw message body (JSON of the envelope, or whatever was published). */
  content: string;
  /** The decoded envelope, or null when the body was not a valid envelope. */
  envelope: EventEnvelope | null;
  attempts: number;
  error: string;
  deadLetteredAt: string;
}

/** Stores a dead letter durably (the service's `dead_letters` table); rejects when it could not. */
export type DeadLetterSink = (letter: DeadLetter) => Promise<void>;

export interface DeadLetterKeeperOptions {
  sink?: DeadLetterSink;
  logger: BusLogger;
  /** First wait after a failed write (default 250 ms); doubles per failure. */
  initialRetryMs?: number;
  /** Cap of the wait between writes (default 30000 ms). */
  maxRetryMs?: number;
  /** One write may take this long before it counts as failed (default 10000 ms). */
  writeTimeoutMs?: number;
}

interface Waiting {
  letter: DeadLetter;
  failures: number;
  timer: NodeJS.Timeout | null;
  writing: Promise<void> | null;
}

/**
 * Holds a memory transport's dead letters until its sink has stored them, retrying failed writes with
 * a capped back-off for as long as the transport is open, so a database hiccup never loses one.
 * Without a sink (library use, unit tests) the letters simply stay here.
 */
export class DeadLetterKeeper {
  private readonly sink: DeadLetterSink | undefined;
  private readonly logger: BusLogger;
  private readonly initialRetryMs: number;
  private readonly maxRetryMs: number;
  private readonly writeTimeoutMs: number;
  private readonly waiting = new Map<string, Waiting>();
  private closed = false;

  constructor(options: DeadLetterKeeperOptions) {
    this.sink = options.sink;
    this.logger = options.logger;
    this.initialRetryMs = options.initialRetryMs ?? 250;
    this.maxRetryMs = options.maxRetryMs ?? 30_000;
    this.writeTimeoutMs = options.writeTimeoutMs ?? 10_000;
  }

  keep(letter: DeadLetter): void {
    const entry: Waiting = { letter, failures: 0, timer: null, writing: null };
    this.waiting.set(letter.id, entry);
    if (this.sink && !this.closed) void this.write(entry);
  }

  /** Letters not stored (yet) from `queue`, oldest first: every letter when there is no sink. */
  list(queue: string): DeadLetter[] {
    return [...this.waiting.values()].map((entry) => entry.letter).filter((letter) => letter.queue === queue);
  }

  /** Letters that died more than `olderThanMs` ago and are still not stored (only with a sink). */
  unsavedOlderThan(olderThanMs: number, now = Date.now()): number {
    if (!this.sink) return 0;
    let count = 0;
    for (const { letter } of this.waiting.values()) {
      if (now - Date.parse(letter.deadLetteredAt) > olderThanMs) count++;
    }
    return count;
  }

  /**
   * Stops retrying after one last attempt per waiting letter (at most `writeTimeoutMs`). What still
   * could not be stored is logged in full, so it survives in the log at least.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.sink) return;
    const last: Promise<void>[] = [];
    for (const entry of this.waiting.values()) {
      if (entry.timer) {
        clearTimeout(entry.timer);
        entry.timer = null;
      }
      last.push(entry.writing ?? this.write(entry));
    }
    await Promise.allSettled(last);
    for (const { letter } of this.waiting.values()) {
      this.logger.error(
        { deadLetter: letter, eventId: letter.envelope?.id, queue: letter.queue },
        'dead letter could not be stored before shutdown; it is kept in this log entry',
      );
    }
  }

  private write(entry: Waiting): Promise<void> {
    const sink = this.sink;
    if (!sink) return Promise.resolve();
    const { letter } = entry;
    entry.writing = withDeadline(
      Promise.resolve().then(() => sink(letter)),
      this.writeTimeoutMs,
      'storing a dead letter',
    )
      .then(
        () => {
          this.waiting.delete(letter.id);
          if (entry.failures > 0) {
            this.logger.info(
              { eventId: letter.envelope?.id, queue: letter.queue, afterFailures: entry.failures },
              'dead letter stored',
            );
          }
        },
        (error: unknown) => {
          entry.failures++;
          this.logger.warn(
            {
              eventId: letter.envelope?.id,
              queue: letter.queue,
              deadLetterId: letter.id,
              failures: entry.failures,
              err: describeError(error),
            },
            this.closed ? 'storing a dead letter failed' : 'storing a dead letter failed; will retry',
          );
          if (this.closed) return;
          const delay = Math.min(
            this.maxRetryMs,
            this.initialRetryMs * 2 ** Math.min(entry.failures - 1, 16),
          );
          entry.timer = setTimeout(() => {
            entry.timer = null;
            void this.write(entry);
          }, delay);
          // A pending retry must not keep a finished process alive; close() makes the last attempt.
          entry.timer.unref();
        },
      )
      .finally(() => {
        entry.writing = null;
      });
    return entry.writing;
  }
}
