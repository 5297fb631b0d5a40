// Shared by the benches that need a database: a throwaway one on the local Postgres server.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Creates `<prefix>_<random>` on the server and returns its URL and a drop(). When `optional` is set
 * and no server answers, resolves to null (the bench then runs on the embedded database).
 */
export async function throwawayDatabase(prefix, { optional = false } = {}) {
  const admin = new pg.Client({ connectionString: postgresUrl });
  try {
    await admin.connect();
  } catch (error) {
    if (optional) return null;
    throw error;
  }
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    },
  };
}
