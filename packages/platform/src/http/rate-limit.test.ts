import type { Request, RequestHandler } from 'express';
import pino, { type Logger } from 'pino';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createDataSource, openDatabase } from '../db/data-source';
import { ValidationError } from '../errors';
import { platformMigrations } from '../service-app';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import { createHttpApp } from './create-app';
import { PostgresRateLimitStore } from './postgres-rate-limit-store';
import { clientKey, createFailureLimiter, createRateLimiter, type RateLimitRule } from './rate-limit';

/** A pino logger whose lines are kept for assertions. */
function recordingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** Stands in for authentication: `X-User` becomes `req.user`. */
const fakeAuth: RequestHandler = (req, _res, next) => {
  const id = req.get('x-user');
  if (id) (req as { user?: unknown }).user = { id };
  next();
};

let ruleCount = 0;
/** A rule with a name (hence key prefix) of its own, so tests never share counters. */
function rule(overrides: Partial<RateLimitRule> = {}): RateLimitRule {
  ruleCount += 1;
  return { name: `test-${ruleCount}`, limit: 3, windowMs: 60_000, key: clientKey, ...overrides };
}

/** The house app with `GET /ping` behind the limiter (by default createRateLimiter); `?fail=1` answers 400. */
function buildApp(
  dataSource: DataSource,
  limitRule: RateLimitRule,
  limiterOf: typeof createFailureLimiter = createRateLimiter,
) {
  const { logger, lines } = recordingLogger();
  const limiter = limiterOf({ dataSource, logger }, limitRule);
  const app = createHttpApp({
    service: 'rate-limit-test',
    logger,
    jsonLimitBytes: 1024 * 1024,
    trustProxy: ['loopback'],
    openapi: { title: 'Rate limit test', version: '1', description: 'test' },
    readiness: {},
    mount: (api) => {
      api.route({
        method: 'get',
        path: '/ping',
        summary: 'Ping',
        rateLimited: true,
        responses: {
          200: {
            description: 'Pong',
            schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          },
        },
        before: [fakeAuth, limiter],
        handler: ({ query }) => {
          if (query.fail) throw new ValidationError('asked to fail');
          return { ok: true };
        },
      });
    },
  });
  return { app, lines };
}

/** Log lines express-rate-limit's validations would have written (ERR_ERL_* / WRN_ERL_*). */
const validationNoise = (lines: Record<string, unknown>[]) =>
  lines.filter((line) => /_ERL_/.test(JSON.stringify(line)));

describe('createRateLimiter on Postgres', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let replica: DataSource;

  const counter = async (key: string) =>
    (
      (await dataSource.query('SELECT hits FROM rate_limit_counters WHERE key = $1', [key])) as {
        hits: number;
      }[]
    )[0]?.hits;

  beforeAll(async () => {
    db = await createTestDatabase('rate_limit');
    dataSource = createDataSource({ url: db.url, entities: [], migrations: platformMigrations, poolSize: 4 });
    await openDatabase(dataSource);
    // A second replica: its own pool on the same database.
    replica = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 2 });
    await replica.initialize();
  });

  afterAll(async () => {
    await replica?.destroy();
    await dataSource?.destroy();
    await db?.drop();
  });

  it('answers the request over the limit with 429, the error body and the rate-limit headers', async () => {
    const limitRule = rule({ limit: 3 });
    const { app, lines } = buildApp(dataSource, limitRule);
    const agent = request(app);
    for (const remaining of [2, 1, 0]) {
      const ok = await agent.get('/ping').set('X-User', 'ana').expect(200);
      expect(ok.headers.ratelimit).toMatch(new RegExp(`^"${limitRule.name}"; r=${remaining}; t=\\d+$`));
    }
    const limited = await agent.get('/ping?x=1').set('X-User', 'ana').expect(429);

    expect(limited.body).toEqual({
      detail: expect.any(String),
      code: 'rate_limited',
      path: '/ping',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(limited.headers['ratelimit-policy']).toMatch(
      new RegExp(`^"${limitRule.name}"; q=3; w=60; pk=:[A-Za-z0-9+/=]+:$`),
    );
    expect(limited.headers.ratelimit).toMatch(new RegExp(`^"${limitRule.name}"; r=0; t=\\d+$`));
    expect(limited.headers['x-ratelimit-limit']).toBeUndefined();
    expect(await counter(`${limitRule.name}:user:ana`)).toBe(4);
    expect(validationNoise(lines)).toEqual([]);
  });

  it('shares one counter between two replicas on the same database', async () => {
    const limitRule = rule({ limit: 4 });
    const a = request(buildApp(dataSource, limitRule).app);
    const b = request(buildApp(replica, limitRule).app);
    for (const agent of [a, b, a, b]) await agent.get('/ping').set('X-User', 'bo').expect(200);
    await a.get('/ping').set('X-User', 'bo').expect(429);
    await b.get('/ping').set('X-User', 'bo').expect(429);
  });

  it('starts a new window from 1 once the old one has expired', async () => {
    const limitRule = rule({ limit: 1 });
    const agent = request(buildApp(dataSource, limitRule).app);
    const key = `${limitRule.name}:user:cy`;
    await agent.get('/ping').set('X-User', 'cy').expect(200);
    await agent.get('/ping').set('X-User', 'cy').expect(429);
    expect(await counter(key)).toBe(2);
    // The window ends by the database clock: moved there instead of waited for, so a slow machine
    // cannot let it end between the two requests above.
    await dataSource.query(
      "UPDATE rate_limit_counters SET reset_at = now() - interval '1 millisecond' WHERE key = $1",
      [key],
    );

    const fresh = await agent.get('/ping').set('X-User', 'cy').expect(200);
    expect(fresh.headers.ratelimit).toMatch(/; r=0; t=\d+$/);
    expect(await counter(key)).toBe(1);
  });

  it('counts only failed requests when skipSuccessfulRequests is set', async () => {
    const limitRule = rule({ limit: 2, skipSuccessfulRequests: true });
    const agent = request(buildApp(dataSource, limitRule).app);
    const key = `${limitRule.name}:user:di`;
    for (let i = 0; i < 4; i++) {
      await agent.get('/ping').set('X-User', 'di').expect(200);
      // The library takes a success back after the response has finished.
      await expectEventually(async () => expect(await counter(key)).toBe(0));
    }
    await agent.get('/ping?fail=1').set('X-User', 'di').expect(400);
    await agent.get('/ping?fail=1').set('X-User', 'di').expect(400);
    await agent.get('/ping').set('X-User', 'di').expect(429);
  });

  it('counts a failure before its answer is finished, so an immediate retry meets the count', async () => {
    const limitRule = rule({ limit: 2 });
    const agent = request(buildApp(dataSource, limitRule, createFailureLimiter).app);
    const key = `${limitRule.name}:user:fa`;
    await agent.get('/ping').set('X-User', 'fa').expect(200);
    await agent.get('/ping?fail=1').set('X-User', 'fa').expect(400);
    expect(await counter(key)).toBe(1);

    // Another session holds the counter's row: the second failure's count has to wait for it, and
    // so does its answer.
    const holder = replica.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    let answered = false;
    try {
      await holder.query('SELECT hits FROM rate_limit_counters WHERE key = $1 FOR UPDATE', [key]);
      const second = agent
        .get('/ping?fail=1')
        .set('X-User', 'fa')
        .then((res) => {
          answered = true;
          return res;
        });
      await expectEventually(async () => {
        const waiting = await dataSource.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()
             AND query LIKE '%INSERT INTO rate_limit_counters%'`,
        );
        expect(waiting).toHaveLength(1);
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(answered).toBe(false);
      await holder.commitTransaction();
      expect((await second).status).toBe(400);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    expect(await counter(key)).toBe(2);
    await agent.get('/ping').set('X-User', 'fa').expect(429);
  });

  it('runs the requests of one key one at a time with oneAtATime: a burst stops at the limit', async () => {
    const limitRule = rule({ limit: 2 });
    const oneAtATime = (deps: Parameters<typeof createFailureLimiter>[0], r: RateLimitRule) =>
      createFailureLimiter(deps, { ...r, oneAtATime: true });
    const agent = request(buildApp(dataSource, limitRule, oneAtATime).app);
    const successes = await Promise.all(
      Array.from({ length: 8 }, () => agent.get('/ping').set('X-User', 'ga')),
    );
    expect(successes.map((res) => res.status)).toEqual(Array(8).fill(200));

    const burst = await Promise.all(
      Array.from({ length: 6 }, () => agent.get('/ping?fail=1').set('X-User', 'ga')),
    );
    expect(burst.map((res) => res.status).sort()).toEqual([400, 400, 429, 429, 429, 429]);
    expect(await counter(`${limitRule.name}:user:ga`)).toBe(2);
  });

  it('keeps separate counters for separate keys', async () => {
    const limitRule = rule({ limit: 1 });
    const agent = request(buildApp(dataSource, limitRule).app);
    await agent.get('/ping').set('X-User', 'ed').expect(200);
    await agent.get('/ping').set('X-User', 'ed').expect(429);
    await agent.get('/ping').set('X-User', 'fa').expect(200);
    // Anonymous callers count by address. The peer is loopback, trusted here like a gateway, so
    // X-Forwarded-For names the client; Forwarded is not read (and triggers no validation log).
    await agent
      .get('/ping')
      .set('X-Forwarded-For', '203.0.113.7')
      .set('Forwarded', 'for=1.2.3.4')
      .expect(200);
    await agent.get('/ping').set('X-Forwarded-For', '203.0.113.7').expect(429);
    await agent.get('/ping').set('X-Forwarded-For', '203.0.113.8').expect(200);
    expect(await counter(`${limitRule.name}:ip:203.0.113.7`)).toBe(2);
  });

  it('lets requests through with a warning when the database fails (fail open)', async () => {
    const broken = {
      query: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    } as unknown as DataSource;
    const limitRule = rule({ limit: 1 });
    const { app, lines } = buildApp(broken, limitRule);
    await request(app).get('/ping').set('X-User', 'gu').expect(200);
    const res = await request(app).get('/ping').set('X-User', 'gu').expect(200);
    expect(res.headers.ratelimit).toBeUndefined();
    const warnings = lines.filter((l) => l.rateLimit === limitRule.name);
    expect(warnings).toHaveLength(2);
    expect(warnings.every((l) => l.level === 40)).toBe(true);
  });

  it('stores long or binary keys hashed and purges expired windows', async () => {
    const store = new PostgresRateLimitStore({
      dataSource,
      logger: pino({ level: 'silent' }),
      prefix: 'purge:',
    });
    store.init({ windowMs: 60_000 });
    await dataSource.query(
      `INSERT INTO rate_limit_counters (key, hits, reset_at) VALUES ('purge:old', 3, now() - interval '1 second')`,
    );
    const long = 'x'.repeat(5000);
    expect((await store.increment(long)).totalHits).toBe(1);
    expect((await store.increment(long)).totalHits).toBe(2);
    expect((await store.increment('nul\u0000byte')).totalHits).toBe(1);
    expect((await store.get(long))?.totalHits).toBe(2);

    (store as unknown as { lastPurgeAt: number }).lastPurgeAt = 0;
    await store.increment('now');
    await store.shutdown();
    const keys = (await dataSource.query("SELECT key FROM rate_limit_counters WHERE key LIKE 'purge:%'")) as {
      key: string;
    }[];
    expect(keys.map((k) => k.key).sort()).toEqual([
      'purge:now',
      expect.stringMatching(/^purge:sha256:[0-9a-f]{64}$/),
      expect.stringMatching(/^purge:sha256:[0-9a-f]{64}$/),
    ]);
  });

  it('documents the 429 answer of a rate-limited route', async () => {
    const res = await request(buildApp(dataSource, rule()).app).get('/openapi.json').expect(200);
    const tooMany = res.body.paths['/ping'].get.responses['429'];
    expect(tooMany.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBodyDto' });
    expect(Object.keys(tooMany.headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
  });
});

describe('clientKey', () => {
  // Services type req.user their own way (declaration merging); the helper only reads id or sub.
  const req = (fields: { user?: object; ip?: string }) => fields as unknown as Request;

  it('uses the authenticated user when there is one', () => {
    expect(clientKey(req({ user: { id: 'u1' }, ip: '10.0.0.1' }))).toBe('user:u1');
    expect(clientKey(req({ user: { sub: 'u2' }, ip: '10.0.0.1' }))).toBe('user:u2');
  });

  it('falls back to the address, IPv6 bucketed by /64', () => {
    expect(clientKey(req({ user: {}, ip: '198.51.100.4' }))).toBe('ip:198.51.100.4');
    expect(clientKey(req({ ip: '::ffff:198.51.100.4' }))).toBe('ip:198.51.100.4');
    const a = clientKey(req({ ip: '2001:db8:1:2:aaaa::1' }));
    expect(a).toBe('ip:2001:db8:1:2::/64');
    expect(clientKey(req({ ip: '2001:db8:1:2:bbbb::9' }))).toBe(a);
    expect(clientKey(req({ ip: '2001:db8:1:3::1' }))).not.toBe(a);
    expect(clientKey(req({}))).toBe('ip:unknown');
  });
});
