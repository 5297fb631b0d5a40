import { Client, Query } from 'pg';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { createDataSource } from './data-source';
import { CallbackQueryClient, pgTypes } from './pg-client';

let db: TestDatabase;
let dataSource: DataSource;
let client: CallbackQueryClient;

beforeAll(async () => {
  db = await createTestDatabase('pgclient');
  dataSource = createDataSource({ url: db.url, entities: [], migrations: [] });
  await dataSource.initialize();
  client = new CallbackQueryClient({ connectionString: db.url, types: pgTypes });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await dataSource?.destroy();
  await db?.drop();
});

describe('CallbackQueryClient', () => {
  it("is the pool's connection class: TypeORM's statements answer rows and pg's errors", async () => {
    const runner = dataSource.createQueryRunner();
    try {
      expect(await runner.connect()).toBeInstanceOf(CallbackQueryClient);
    } finally {
      await runner.release();
    }
    const rows = await dataSource.query('SELECT $1::int + 1 AS n, now() AS at', [41]);
    expect(rows).toEqual([{ n: 42, at: expect.any(Date) }]);
    await expect(dataSource.query('SELECT 1 / $1::int', [0])).rejects.toMatchObject({
      name: 'QueryFailedError',
      driverError: { code: '22012' },
    });
  });

  it('answers the promise form with the result and rejects it with the error', async () => {
    const result = await client.query('SELECT g FROM generate_series(1, $1::int) g', [3]);
    expect(result.rows).toEqual([{ g: 1 }, { g: 2 }, { g: 3 }]);
    expect(result.rowCount).toBe(3);
    const named = await client.query({ name: 'twice', text: 'SELECT $1::int * 2 AS v', values: [21] });
    expect(named.rows).toEqual([{ v: 42 }]);
    const error = await client.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '42P01', message: 'relation "no_such_table" does not exist' });
    // The connection is usable after the failure.
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it("keeps pg's callback form and submittable queries", async () => {
    const viaCallback = await new Promise((resolve, reject) =>
      client.query('SELECT $1::text AS t', ['x'], (error, result) =>
        error ? reject(error) : resolve(result.rows),
      ),
    );
    expect(viaCallback).toEqual([{ t: 'x' }]);
    const rows: unknown[] = [];
    const query = new Query('SELECT g FROM generate_series(1, 2) g');
    query.on('row', (row) => rows.push(row));
    await new Promise((resolve, reject) => {
      query.on('end', resolve);
      query.on('error', reject);
      client.query(query);
    });
    expect(rows).toEqual([{ g: 1 }, { g: 2 }]);
    const viaConfig = await new Promise((resolve, reject) =>
      client.query({
        text: 'SELECT 2 AS two',
        callback: (error: Error | null, result: { rows: unknown[] }) =>
          error ? reject(error) : resolve(result.rows),
      } as never),
    );
    expect(viaConfig).toEqual([{ two: 2 }]);
  });

  it('refuses a missing query at once and answers a closed client with a rejection', async () => {
    expect(() => client.query(null as never)).toThrow('Client was passed a null or undefined query');
    const closed = new CallbackQueryClient({ connectionString: db.url });
    await closed.connect();
    await closed.end();
    await expect(closed.query('SELECT 1')).rejects.toThrow('Client was closed and is not queryable');
  });

  it("reads timestamps as pg's own parsers do", async () => {
    const sql = `SELECT v::timestamptz AS tz, w::timestamp AS ts FROM (VALUES
      ('2026-11-27 11:10:51.123456+00', '2026-11-27 11:10:51.123456'),
      ('2026-11-27 11:10:51+05:30', '1999-12-31 23:59:59'),
      ('2026-06-01 00:00:00.5-03', '2026-06-01 00:00:00.5'),
      ('0099-01-01 00:00:00+00', '0099-01-01 00:00:00'),
      ('0044-03-15 12:00:00+00 BC', '0044-03-15 12:00:00 BC'),
      ('12026-11-27 11:10:51+00', '12026-11-27 11:10:51'),
      ('infinity', 'infinity'),
      ('-infinity', '-infinity')) AS t(v, w)`;
    const plain = new Client({ connectionString: db.url });
    await plain.connect();
    try {
      const expected = (await plain.query(sql)).rows;
      for (const timeZone of ['UTC', 'Asia/Kolkata']) {
        await client.query(`SET TIME ZONE '${timeZone}'`);
        await plain.query(`SET TIME ZONE '${timeZone}'`);
        expect((await client.query(sql)).rows).toEqual((await plain.query(sql)).rows);
      }
      expect(expected[0].tz).toEqual(new Date('2026-11-27T11:10:51.123Z'));
      expect(expected[6]).toEqual({ tz: Infinity, ts: Infinity });
      expect(await dataSource.query(sql)).toEqual(expected);
    } finally {
      await plain.end();
    }
  });
});
