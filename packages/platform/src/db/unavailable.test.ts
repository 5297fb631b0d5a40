import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { toAppError } from '../http/error-middleware';
import { createTestDatabase, TEST_POSTGRES_URL, type TestDatabase } from '../test-kit/database';
import { createDataSource, DB_CONNECT_TIMEOUT_MS } from './data-source';
import { freePort } from './embedded-postgres';
import { CallbackQueryClient } from './pg-client';
import { isDatabaseUnavailable } from './unavailable';

async function failure(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

function expectDatabase503(error: unknown): void {
  expect(isDatabaseUnavailable(error)).toBe(true);
  const mapped = toAppError(error);
  expect({ status: mapped.status, code: mapped.code, headers: mapped.headers }).toEqual({
    status: 503,
    code: 'unavailable',
    headers: { 'Retry-After': '2' },
  });
  expect(mapped.detail).toMatch(/database is unavailable/);
}

/** Ends the sessions of `applicationName` on the test server, as a fast shutdown does (57P01). */
async function terminateSessions(applicationName: string): Promise<number> {
  const admin = new Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    return rows.length;
  } finally {
    await admin.end();
  }
}

describe('a database out of reach', () => {
  it('a refused connection of the pool client is the database being unavailable: 503 naming it', async () => {
    const port = await freePort();
    const client = new CallbackQueryClient({ connectionString: `postgres://postgres@127.0.0.1:${port}/x` });
    const error = await failure(() => client.connect());
    expect((error as { code?: string }).code).toBe('ECONNREFUSED');
    expectDatabase503(error);
  });

  it('a refused connection of something else is not said to be the database', () => {
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(error)).toBe(false);
    expect(toAppError(error).status).toBe(503);
    expect(toAppError(error).detail).not.toMatch(/database/);
  });

  it('a 23505 or a bug is not unavailability', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('dup'), { code: '23505', severity: 'ERROR' }))).toBe(
      false,
    );
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
  });
});

describe('the pool when the server ends its sessions', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const applicationName = `unavailable-test-${process.pid}`;

  beforeAll(async () => {
    db = await createTestDatabase('unavail');
    dataSource = createDataSource({
      url: db.url,
      entities: [],
      migrations: [],
      applicationName,
      poolSize: 3,
    });
    await dataSource.initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('drops the ended idle connections and serves the next query on a new one', async () => {
    await Promise.all([1, 2, 3].map(() => dataSource.query('SELECT pg_sleep(0.05)')));
    const [{ pid: before }] = await dataSource.query('SELECT pg_backend_pid() AS pid');
    expect(await terminateSessions(applicationName)).toBeGreaterThan(0);
    // Each idle client gets its 57P01 as an error event; the pool removes it.
    await new Promise((r) => setTimeout(r, 200));
    const [{ pid: after }] = await dataSource.query('SELECT pg_backend_pid() AS pid');
    expect(after).not.toBe(before);
  });

  it('a query running when its session ends fails as unavailable (503), and the pool recovers', async () => {
    const running = failure(() => dataSource.query('SELECT pg_sleep(5)'));
    await new Promise((r) => setTimeout(r, 200));
    await terminateSessions(applicationName);
    const error = await running;
    expect((error as { code?: string }).code).toBe('57P01');
    expectDatabase503(error);
    // The pool's idle connections were ended with it: each leaves the pool when its end is read, and
    // a query that meets one first fails as unavailable too (a loaded machine reads them late).
    // Then the pool serves again.
    const meanwhile: unknown[] = [];
    let answer: unknown;
    for (const until = Date.now() + 5_000; answer === undefined && Date.now() < until; ) {
      answer = await dataSource.query('SELECT 1 AS one').catch((failed: unknown) => {
        meanwhile.push(failed);
        return undefined;
      });
    }
    for (const failed of meanwhile) expectDatabase503(failed);
    expect(meanwhile.length).toBeLessThanOrEqual(3);
    expect(answer).toEqual([{ one: 1 }]);
  });

  it('waits for a free connection at most DB_CONNECT_TIMEOUT_MS, then answers 503 with Retry-After', async () => {
    const holders = await Promise.all(
      [1, 2, 3].map(async () => {
        const runner = dataSource.createQueryRunner();
        await runner.startTransaction();
        return runner;
      }),
    );
    try {
      const started = Date.now();
      const error = await failure(() => dataSource.query('SELECT 1'));
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(DB_CONNECT_TIMEOUT_MS - 50);
      expect(waited).toBeLessThan(DB_CONNECT_TIMEOUT_MS + 1_000);
      const mapped = toAppError(error);
      expect({ status: mapped.status, retryAfter: mapped.headers?.['Retry-After'] }).toEqual({
        status: 503,
        retryAfter: expect.stringMatching(/^\d+$/),
      });
    } finally {
      for (const runner of holders) {
        await runner.rollbackTransaction();
        await runner.release();
      }
    }
  }, 15_000);

  it('a transaction whose session ends between statements fails as unavailable (503), nothing of it kept', async () => {
    await dataSource.query('CREATE TABLE IF NOT EXISTS t (n int)');
    const error = await failure(() =>
      dataSource.transaction(async (manager) => {
        await manager.query('INSERT INTO t VALUES (1)');
        await terminateSessions(applicationName);
        await new Promise((r) => setTimeout(r, 200));
        await manager.query('INSERT INTO t VALUES (2)');
      }),
    );
    expectDatabase503(error);
    expect(await dataSource.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 0 }]);
  });
});
