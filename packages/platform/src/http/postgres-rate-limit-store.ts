import { createHash } from 'node:crypto';
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { DataSource } from 'typeorm';
import { describeError } from '../bus/logger';
import type { Logger } from '../logger';

export interface PostgresRateLimitStoreOptions {
  dataSource: DataSource;
  logger: Pick<Logger, 'warn'>;
  /** Prepended to every key in the table; one per limiter so two rules never share a counter. */
  prefix?: string;
  /** Expired windows are deleted at most this often, in the background of an increment. Default 60 s. */
  purgeIntervalMs?: number;
}

/** A database failure while counting; createRateLimiter lets the request through (fail open). */
export class RateLimitStoreError extends Error {
  constructor(operation: string, cause: unknown) {
    super(`rate-limit store ${operation} failed: ${describeError(cause)}`, { cause });
    this.name = 'RateLimitStoreError';
  }
}

interface CounterRow {
  hits: number | string;
  reset_at: Date | string;
}

// One atomic statement: a missing or expired window starts at 1, a live one counts up. The SET
// expressions read the row as it was, so both CASEs see the same old reset_at.
const INCREMENT_SQL = `
  INSERT INTO rate_limit_counters AS c (key, hits, reset_at)
  VALUES ($1, 1, now() + $2::double precision * interval '1 millisecond')
  ON CONFLICT (key) DO UPDATE SET
    hits = CASE WHEN c.reset_at <= now() THEN 1 ELSE c.hits + 1 END,
    reset_at = CASE WHEN c.reset_at <= now() THEN EXCLUDED.reset_at ELSE c.reset_at END
  RETURNING hits, reset_at`;

/** Printable ASCII up to 200 characters is stored as is (readable when debugging). */
const PLAIN_KEY = /^[\x20-\x7e]{0,200}$/;

function toInfo(row: CounterRow): ClientRateLimitInfo {
  return { totalHits: Number(row.hits), resetTime: new Date(row.reset_at) };
}

/**
 * express-rate-limit store on the `rate_limit_counters` table, so every replica counts against
 * the same fixed window per key (DECISIONS.md section 8). Windows use the database clock.
 *
 * Fail open: a rate limiter must not turn a database hiccup into failed requests, so `increment`
 * rejects with RateLimitStoreError and the limiter is built with `passOnStoreError` (it logs a
 * warning and lets the request through, without rate-limit headers). The other methods never
 * reject: they log a warning and carry on (`get` then reports no window).
 */
export class PostgresRateLimitStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;
  private readonly purgeIntervalMs: number;
  private readonly dataSource: DataSource;
  private readonly logger: Pick<Logger, 'warn'>;
  private lastPurgeAt = Date.now();
  private purging?: Promise<void>;
  private closed = false;

  constructor(options: PostgresRateLimitStoreOptions) {
    this.dataSource = options.dataSource;
    this.logger = options.logger;
    this.prefix = options.prefix ?? 'rl:';
    this.purgeIntervalMs = options.purgeIntervalMs ?? 60_000;
  }

  init(options: Pick<Options, 'windowMs'>): void {
    this.windowMs = options.windowMs;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    try {
      const rows: CounterRow[] = await this.dataSource.query(
        'SELECT hits, reset_at FROM rate_limit_counters WHERE key = $1 AND reset_at > now()',
        [this.storedKey(key)],
      );
      return rows[0] ? toInfo(rows[0]) : undefined;
    } catch (error) {
      this.warn('get', error);
      return undefined;
    }
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    let rows: CounterRow[];
    try {
      rows = await this.dataSource.query(INCREMENT_SQL, [this.storedKey(key), this.windowMs]);
    } catch (error) {
      throw new RateLimitStoreError('increment', error);
    }
    this.purgeIfDue();
    return toInfo(rows[0]);
  }

  async decrement(key: string): Promise<void> {
    try {
      await this.dataSource.query(
        'UPDATE rate_limit_counters SET hits = hits - 1 WHERE key = $1 AND hits > 0 AND reset_at > now()',
        [this.storedKey(key)],
      );
    } catch (error) {
      this.warn('decrement', error);
    }
  }

  async resetKey(key: string): Promise<void> {
    try {
      await this.dataSource.query('DELETE FROM rate_limit_counters WHERE key = $1', [this.storedKey(key)]);
    } catch (error) {
      this.warn('resetKey', error);
    }
  }

  /** Stops purging and waits for a purge in flight. */
  async shutdown(): Promise<void> {
    this.closed = true;
    await this.purging;
  }

  /**
   * Keys come from requests (an email, a header); a long one would exceed the btree entry limit
   * and a NUL byte is not valid text, and either error would fail open. Those are hashed instead.
   */
  private storedKey(key: string): string {
    const full = `${this.prefix}${key}`;
    return PLAIN_KEY.test(full)
      ? full
      : `${this.prefix}sha256:${createHash('sha256').update(key).digest('hex')}`;
  }

  /** Any replica may delete any expired row: an expired window counts as no window anyway. */
  private purgeIfDue(): void {
    if (this.closed || this.purging || Date.now() - this.lastPurgeAt < this.purgeIntervalMs) return;
    this.lastPurgeAt = Date.now();
    this.purging = this.dataSource
      .query('DELETE FROM rate_limit_counters WHERE reset_at <= now()')
      .then(
        () => undefined,
        (error: unknown) => this.warn('purge', error),
      )
      .finally(() => {
        this.purging = undefined;
      });
  }

  private warn(operation: string, error: unknown): void {
    this.logger.warn({ err: error, prefix: this.prefix, operation }, 'rate-limit store query failed');
  }
}
