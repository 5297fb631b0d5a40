import { Client } from 'pg';
import { DataSource, EntityManager, type MixedList } from 'typeorm';
import { CallbackQueryClient, pgTypes } from './pg-client';

/** An entity or migration class. */
export type ClassType = abstract new (...args: never[]) => unknown;
type Classes = MixedList<ClassType | string>;

export interface DataSourceSettings {
  url: string;
  entities: Classes;
  migrations: Classes;
  /** Pool size (default 10). */
  poolSize?: number;
  /** Passed to pg as application_name, shows up in pg_stat_activity. */
  applicationName?: string;
}

/**
 * The longest a query waits for a pooled connection (all busy) or for a new one to connect; then it
 * fails (503 `unavailable`), so no request hangs on a database that is down or saturated.
 */
export const DB_CONNECT_TIMEOUT_MS = 5_000;

/**
 * One DataSource per service. Migrations are checked in and run at start;
 * `synchronize` is never on.
 */
export function createDataSource(settings: DataSourceSettings): DataSource {
  return new DataSource({
    type: 'postgres',
    url: settings.url,
    entities: settings.entities,
    migrations: settings.migrations,
    migrationsRun: false,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    applicationName: settings.applicationName,
    poolSize: settings.poolSize ?? 10,
    // The pool's connections are CallbackQueryClients (results do not outlive their use) with the
    // faster date parser (pg-client.ts).
    extra: { connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS, Client: CallbackQueryClient, types: pgTypes },
  });
}

/** Initialises the DataSource and applies pending migrations; returns their names. */
export async function openDatabase(dataSource: DataSource): Promise<string[]> {
  await dataSource.initialize();
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}

/**
 * Creates the database named in `url` when the server lacks it (the service owns its database;
 * docker-compose's init script creates them too, so this is a no-op there).
 */
export async function ensureDatabaseExists(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) return;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client
        .query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`)
        .catch((error: { code?: string }) => {
          // Another replica created it between our check and our create.
          if (error.code !== '42P04') throw error;
        });
    }
  } finally {
    await client.end();
  }
}

/** What a statement runs on without TypeORM: its pool (`driver.master`) or a query runner's pg client. */
interface PgTarget {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * The pg side of an EntityManager: the connection of its transaction, else the pool. Statements sent
 * there skip TypeORM's per-query work (a query runner per statement outside a transaction, the
 * subscriber broadcasts, the result wrapping), which costs more than a short indexed read.
 */
async function pgTargetOf(runner: unknown): Promise<PgTarget | undefined> {
  if (!(runner instanceof EntityManager)) return undefined;
  // A released runner is left to TypeORM, which refuses it (connecting again would leave its transaction).
  if (runner.queryRunner)
    return runner.queryRunner.isReleased ? undefined : ((await runner.queryRunner.connect()) as PgTarget);
  return (runner.connection.driver as unknown as { master?: PgTarget }).master;
}

/**
 * The rows of a raw query. TypeORM's `query()` answers `[rows, affected]` for UPDATE and DELETE
 * (with or without RETURNING) on Postgres, and the rows alone for SELECT and INSERT: this takes the
 * rows either way. On an EntityManager, the statement goes to pg directly.
 */
export async function queryRows<T>(
  runner: { query(sql: string, params?: unknown[]): Promise<unknown> },
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const target = await pgTargetOf(runner);
  if (target) return (await target.query({ text: sql, values: params })).rows as T[];
  const result = await runner.query(sql, params);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  )
    return result[0] as T[];
  return result as T[];
}

/**
 * The rows of a hot statement, as a named prepared statement: each pooled connection parses and
 * plans it once instead of on every call (inside a transaction, on that transaction's connection).
 * `name` must be unique per statement text. Not for statements whose plan depends on the values
 * (a LIKE pattern): a prepared statement may switch to a generic plan.
 */
export async function preparedRows<T>(
  manager: EntityManager,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const target = await pgTargetOf(manager);
  if (!target) return queryRows<T>(manager, text, values);
  return (await target.query({ name, text, values })).rows as T[];
}

type RowMapper = (row: Record<string, unknown>) => object;
const rowMappers = new WeakMap<DataSource, Map<unknown, RowMapper>>();

/**
 * A mapper from rows of `SELECT <alias>.*` on an entity's table to entity instances, built once per
 * data source from TypeORM's metadata (column names, property names, value transformers): for hot
 * reads written as SQL, where the query builder's result transformer costs more than the statement.
 */
export function entityRows<T extends object>(
  dataSource: DataSource,
  entity: abstract new (...args: never[]) => T,
): (row: Record<string, unknown>) => T {
  let mappers = rowMappers.get(dataSource);
  if (!mappers) {
    mappers = new Map();
    rowMappers.set(dataSource, mappers);
  }
  let mapper = mappers.get(entity);
  if (!mapper) {
    const metadata = dataSource.getMetadata(entity);
    const columns = metadata.columns.map((column) => {
      const transformer = column.transformer;
      if (Array.isArray(transformer))
        throw new Error(`${metadata.name}.${column.propertyName}: transformer lists are not mapped`);
      return {
        from: column.databaseName,
        to: column.propertyName,
        read: transformer?.from.bind(transformer),
      };
    });
    mapper = (row) => {
      const out = metadata.create() as Record<string, unknown>;
      for (const { from, to, read } of columns) {
        const value = row[from];
        out[to] = read ? read(value) : value;
      }
      return out;
    };
    mappers.set(entity, mapper);
  }
  return mapper as (row: Record<string, unknown>) => T;
}
