import type { RevokedSessionList, SessionRevokedData } from '@hwp/contracts';
import type { Logger } from '@hwp/platform';
import { AppError } from '@hwp/platform';

export interface RevokedSessionsOptions {
  /** The API host's `GET /auth/sessions/revoked`. */
  url: string;
  /** Re-read this often, in case events were missed (broker away, replica restarted). */
  refreshMs: number;
  logger: Logger;
  fetchTimeoutMs?: number;
  /** Told of revoked sessions a full re-read found that no event had brought. */
  onLearned?: (sessionIds: string[]) => void;
}

/** First retry of an unread list; each next one waits twice as long. */
const STARTUP_RETRY_MS = 250;
/** How long after start a failed read is expected (the API host starting) rather than warned about. */
const STARTUP_GRACE_MS = 30_000;

/**
 * Sessions the API host ended whose tokens may still be unexpired. Fed live by `session.revoked.v1`
 * (every replica receives it) and read in full from the API host at start and every `refreshMs`, so
 * a replica that missed events catches up. No token is trusted before the first full read succeeded.
 */
export class RevokedSessions {
  private readonly until = new Map<string, number>();
  private loaded = false;
  private loading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private startedAt = Date.now();

  constructor(private readonly options: RevokedSessionsOptions) {}

  /** Adds what an event says (idempotent). */
  add(data: SessionRevokedData): void {
    const expires = data.exp * 1000;
    for (const id of data.session_ids ?? []) this.remember(id, expires);
  }

  /**
   * Throws 401 for a revoked session, 503 while the list could never be read (a token of an ended
   * session must not slip through a replica that just started).
   */
  async assertLive(sessionId: string): Promise<void> {
    if (!this.loaded) {
      await this.refresh().catch(() => undefined);
      if (!this.loaded) {
        throw new AppError('unavailable', 'Session revocations could not be read from the API host yet', {
          retryable: true,
          headers: { 'Retry-After': '2' },
        });
      }
    }
    const expires = this.until.get(sessionId);
    if (expires !== undefined && expires > Date.now()) {
      throw new AppError('unauthorized', 'The session of this token has ended; sign in again');
    }
  }

  isRevoked(sessionId: string): boolean {
    const expires = this.until.get(sessionId);
    return expires !== undefined && expires > Date.now();
  }

  /** Reads the full list now (one read at a time). */
  refresh(): Promise<void> {
    this.loading ??= this.read().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  start(): void {
    this.startedAt = Date.now();
    this.firstRead(STARTUP_RETRY_MS);
    this.timer = setInterval(() => {
      this.refresh().catch(() => undefined);
    }, this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    this.timer = null;
    this.retry = null;
  }

  /**
   * Until the list has been read once, tries again soon (twice as late each time, at most every
   * `refreshMs`): hosts started together (the embedded runner, compose) come up in any order.
   */
  private firstRead(delayMs: number): void {
    this.refresh().catch(() => {
      if (this.loaded || this.timer === null) return;
      this.retry = setTimeout(() => this.firstRead(Math.min(delayMs * 2, this.options.refreshMs)), delayMs);
      this.retry.unref();
    });
  }

  private remember(sessionId: string, expires: number): void {
    if (!Number.isFinite(expires)) return;
    const known = this.until.get(sessionId) ?? 0;
    if (expires > known) this.until.set(sessionId, expires);
  }

  private async read(): Promise<void> {
    try {
      const res = await fetch(this.options.url, {
        signal: AbortSignal.timeout(this.options.fetchTimeoutMs ?? 3_000),
      });
      if (!res.ok) throw new Error(`${this.options.url} answered ${res.status}`);
      const list = (await res.json()) as RevokedSessionList;
      if (!Array.isArray(list?.items))
        throw new Error(`${this.options.url} did not answer a list of sessions`);
      const now = Date.now();
      for (const [id, expires] of this.until) if (expires <= now) this.until.delete(id);
      const learned: string[] = [];
      for (const item of list.items) {
        if (!this.until.has(item.session_id)) learned.push(item.session_id);
        this.remember(item.session_id, Date.parse(item.expires_at));
      }
      // A replica that missed the events still ends those sessions' streams (once loaded: before,
      // nothing was trusted).
      if (this.loaded && learned.length > 0) this.options.onLearned?.(learned);
      if (!this.loaded)
        this.options.logger.info({ revoked: list.items.length }, 'session revocations loaded');
      this.loaded = true;
    } catch (error) {
      // While the API host may still be starting, not reaching it is expected: no warning yet.
      const starting = !this.loaded && Date.now() - this.startedAt < STARTUP_GRACE_MS;
      const log = starting ? this.options.logger.debug : this.options.logger.warn;
      log.call(
        this.options.logger,
        { err: error, url: this.options.url },
        'reading session revocations failed',
      );
      throw error;
    }
  }
}
