import { Client } from 'pg';
import { newId } from '../ids';

/** Postgres server the integration tests use (trust auth on this machine and in CI). */
export const TEST_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Creates a fresh database for one test file: empty, or a copy of `template` (a database every
 * migration already ran in, see migrated-template.ts). drop() removes it (and kicks its sessions).
 */
export async function createTestDatabase(prefix = 't', template?: string): Promise<TestDatabase> {
  const name = `${prefix}_${newId().replace(/-/g, '').slice(-16)}`.toLowerCase();
  const admin = new Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabase(TEST_POSTGRES_URL, name),
    async drop() {
      const c = new Client({ connectionString: TEST_POSTGRES_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
