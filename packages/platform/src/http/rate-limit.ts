import type { Request, RequestHandler, Response } from 'express';
import {
  ipKeyGenerator,
  type Options,
  type RateLimitInfo,
  type Logger as RateLimitLogger,
  type RateLimitRequestHandler,
  rateLimit,
  type Store,
} from 'express-rate-limit';
import type { DataSource } from 'typeorm';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { KeyLanes } from './key-lanes';
import { PostgresRateLimitStore, RateLimitStoreError } from './postgres-rate-limit-store';

/** One limit a route (or a group of routes) enforces. */
export interface RateLimitRule {
  /**
   * Policy name: names the quota in the `RateLimit` / `RateLimit-Policy` headers and prefixes
   * the stored keys, so each rule has its own counters. Letters, digits, `.`, `_`, `-`.
   */
  name: string;
  /** Requests allowed per window; the next one answers 429. */
  limit: number;
  windowMs: number;
  /**
   * The bucket a request counts against (`clientKey` for per-user-else-IP limits). Runs before
   * validation, so it must cope with any input.
   */
  key(req: Request): string;
  /** Count only failed requests (status >= 400), e.g. wrong passwords. */
  skipSuccessfulRequests?: boolean;
  /** Count only successful requests (status < 400). */
  skipFailedRequests?: boolean;
  /** The `detail` of the 429 body. */
  message?: string;
  /**
   * When the counter store cannot be reached, refuse (503 with Retry-After) instead of letting the
   * request through: for the limits that stand between a guesser and credentials (sign-in, sign-up,
   * codes, recovery). Other limits fail open: an unreachable store fails those requests anyway.
   */
  failClosed?: boolean;
}

/** What a fail-closed limiter answers while its store is unreachable. */
function storeUnavailable(): AppError {
  return new AppError('unavailable', 'The rate-limit store is unavailable; retry shortly', {
    retryable: true,
    headers: { 'Retry-After': '5' },
  });
}

export interface RateLimiterDeps {
  dataSource: DataSource;
  logger: Logger;
}

const RULE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The rate-limit key of a request (DECISIONS.md section 8): `user:<id>` when authenticated,
 * else `ip:<address>`, with IPv6 addresses bucketed by /64 (one subscriber's prefix).
 */
export function clientKey(req: Request): string {
  const user = (req as { user?: unknown }).user;
  if (typeof user === 'object' && user !== null) {
    const { id, sub } = user as { id?: unknown; sub?: unknown };
    const userId = typeof id === 'string' && id ? id : typeof sub === 'string' && sub ? sub : undefined;
    if (userId) return `user:${userId}`;
  }
  // req.ip is undefined once the socket is gone; such requests share one bucket.
  return `ip:${req.ip ? ipKeyGenerator(req.ip, 64) : 'unknown'}`;
}

/** Seconds until the window resets, at least 1 so a clock skew never invites an instant retry. */
function retryAfterSeconds(req: Request): number {
  const resetTime = (req as Request & { rateLimit?: RateLimitInfo }).rateLimit?.resetTime;
  return resetTime ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : 1;
}

/**
 * A rate-limit middleware for `before` of a route. Counters live in Postgres (shared by all
 * replicas, the embedded server included). Over the limit it forwards
 * `AppError('rate_limited')`, so the error middleware writes the house error body; the
 * `Retry-After`, `RateLimit-Policy` and `RateLimit` headers are already set by then.
 * Create limiters when the app is built, never inside a request.
 */
export function createRateLimiter(deps: RateLimiterDeps, rule: RateLimitRule): RateLimitRequestHandler {
  if (!RULE_NAME.test(rule.name)) throw new Error(`rate-limit rule name "${rule.name}" is not a token`);
  if (!Number.isInteger(rule.limit) || rule.limit < 1) {
    throw new Error(`rate-limit rule "${rule.name}": limit must be a positive integer`);
  }
  const log = deps.logger.child({ rateLimit: rule.name });
  const detail = rule.message ?? 'Too many requests, try again later';
  // express-rate-limit reports misconfigurations (ERR_ERL_*) and store failures through this.
  const logger: RateLimitLogger = {
    error(error, message) {
      if (error instanceof RateLimitStoreError) {
        log.warn(
          { err: error },
          rule.failClosed
            ? 'rate-limit store unavailable, request refused'
            : 'rate-limit store unavailable, request let through',
        );
      } else {
        log.error({ err: error }, message ?? 'express-rate-limit error');
      }
    },
    warn(error, message) {
      log.warn({ err: error }, message ?? 'express-rate-limit warning');
    },
  };

  const limiter = rateLimit({
    windowMs: rule.windowMs,
    limit: rule.limit,
    // Passed as is: express-rate-limit reads its source to flag a key built from req.ip
    // without ipKeyGenerator (IPv6 users could rotate addresses inside their prefix).
    keyGenerator: rule.key,
    identifier: rule.name,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    retryAfter: retryAfterSeconds,
    skipSuccessfulRequests: rule.skipSuccessfulRequests ?? false,
    skipFailedRequests: rule.skipFailedRequests ?? false,
    store: new PostgresRateLimitStore({ dataSource: deps.dataSource, logger: log, prefix: `${rule.name}:` }),
    // Fail open unless the rule says otherwise: see PostgresRateLimitStore.
    passOnStoreError: !rule.failClosed,
    handler: (_req, _res, next) => {
      next(new AppError('rate_limited', detail));
    },
    logger,
    // All validations stay on. The ones about `trust proxy`, X-Forwarded-For, Forwarded and
    // req.ip run only inside the default keyGenerator, which a rule always replaces; the app's
    // 'loopback, linklocal, uniquelocal' would pass them anyway (only `true` is flagged). The
    // rest check this configuration or the store and each logs at most once per limiter.
    validate: true,
  });
  if (!rule.failClosed) return limiter;
  // express-rate-limit hands a store failure to express as it is: say what it means.
  const closed = ((req, res, next) =>
    limiter(req, res, (error?: unknown) =>
      next(error instanceof RateLimitStoreError ? storeUnavailable() : error),
    )) as RateLimitRequestHandler;
  return Object.assign(closed, { resetKey: limiter.resetKey, getKey: limiter.getKey });
}

/** A limit on failures only (wrong passwords): see createFailureLimiter. */
export type FailureLimitRule = Omit<RateLimitRule, 'skipSuccessfulRequests' | 'skipFailedRequests'> & {
  /** Which answers count as failures (default: every status >= 400 but 429). */
  counts?: (status: number) => boolean;
  /**
   * Requests with the same key run one at a time in this process (the others wait, at most
   * MAX_WAITING of them, the rest get 429): simultaneous guesses each meet the count of the ones
   * before, instead of all reading the same count. For narrow keys (account and address), where
   * a real client rarely sends two at once.
   */
  oneAtATime?: boolean;
};

/** Requests of one key that wait behind the one running (oneAtATime). */
const MAX_WAITING = 10;

/**
 * Blocks a key once `limit` failed requests (status >= 400, 429 excepted) were recorded in the
 * window. A failure is counted once its answer is known and before that answer is finished, so a
 * client cannot retry ahead of its count, and concurrent successful requests never count (unlike
 * express-rate-limit's skipSuccessfulRequests, which counts every request first and takes successes
 * back when they finish: eight simultaneous good logins would trip a limit of five).
 * Same store, headers and error body as createRateLimiter; fails open likewise.
 */
export function createFailureLimiter(deps: RateLimiterDeps, rule: FailureLimitRule): RequestHandler {
  if (!RULE_NAME.test(rule.name)) throw new Error(`rate-limit rule name "${rule.name}" is not a token`);
  const log = deps.logger.child({ rateLimit: rule.name });
  const store: Store = new PostgresRateLimitStore({
    dataSource: deps.dataSource,
    logger: log,
    prefix: `${rule.name}:`,
  });
  store.init?.({ windowMs: rule.windowMs } as Options);
  const windowSeconds = Math.ceil(rule.windowMs / 1000);
  const detail = rule.message ?? 'Too many failed attempts, try again later';

  const lanes = rule.oneAtATime ? new KeyLanes(MAX_WAITING) : undefined;

  return async (req, res, next) => {
    const key = rule.key(req);
    if (lanes) {
      let closed = false;
      let leave: (() => void) | null = null;
      res.once('close', () => {
        closed = true;
        leave?.();
      });
      leave = await lanes.enter(key);
      if (!leave) {
        next(
          new AppError('rate_limited', `${detail} (too many at once)`, { headers: { 'Retry-After': '1' } }),
        );
        return;
      }
      if (closed) {
        leave(); // the client left while it waited
        return;
      }
    }
    let storeDown = false;
    const info = await Promise.resolve(store.get?.(key)).catch((error: unknown) => {
      storeDown = true;
      log.warn(
        { err: error },
        rule.failClosed
          ? 'rate-limit store unavailable, request refused'
          : 'rate-limit store unavailable, request let through',
      );
      return undefined;
    });
    if (storeDown && rule.failClosed) {
      next(storeUnavailable());
      return;
    }
    const hits = info?.totalHits ?? 0;
    const resetSeconds = info?.resetTime
      ? Math.max(1, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000))
      : windowSeconds;
    res.setHeader('RateLimit-Policy', `"${rule.name}"; q=${rule.limit}; w=${windowSeconds}`);
    res.setHeader('RateLimit', `"${rule.name}"; r=${Math.max(0, rule.limit - hits)}; t=${resetSeconds}`);
    if (hits >= rule.limit) {
      next(new AppError('rate_limited', detail, { headers: { 'Retry-After': String(resetSeconds) } }));
      return;
    }
    // A failure is stored before its answer is finished: a client that reads the 400 and tries
    // again at once meets the new count (counted on 'finish', a quick guesser got a sixth try).
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      res.end = end as Response['end'];
      const failed = rule.counts
        ? rule.counts(res.statusCode)
        : res.statusCode >= 400 && res.statusCode !== 429;
      if (!failed) return end(...args);
      Promise.resolve(store.increment(key))
        .catch((error: unknown) => log.warn({ err: error }, 'could not count a failed request'))
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}

/**
 * Requests to protected routes that end in 401 (no token, a bad or revoked one), counted per client
 * address: past `limit` in the window the address gets 429 before its credentials are even looked
 * at, so probing protected routes without a valid token is rate limited too.
 */
export function createUnauthenticatedLimiter(
  deps: RateLimiterDeps,
  rule: Pick<FailureLimitRule, 'limit' | 'windowMs'>,
): RequestHandler {
  return createFailureLimiter(deps, {
    name: 'unauthenticated',
    key: clientKey,
    counts: (status) => status === 401,
    message: 'Too many unauthenticated requests from this address; try again later',
    ...rule,
  });
}
