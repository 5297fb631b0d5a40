import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { createDataSource, openDatabase } from '../db/data-source';
import type { BaseConfig, ServiceDefinition } from '../deps';
import { newId } from '../ids';
import { TEST_POSTGRES_URL, withDatabase } from './database';

/**
 * Set by the jest global setup (test/support/global-setup.js) for one run: templates are built
 * once per run and service, so a migration edited between runs is never served from a stale copy.
 */
export const TEST_RUN_ENV = 'HWP_TEST_RUN_ID';

/** Prefix of every template database; the run id follows, so a run's teardown drops its own. */
export const TEMPLATE_PREFIX = 'tpl_';

const built = new Map<string, Promise<string>>();

/**
 * The name of a database holding every migration of `definition`, built on first use in this run
 * (under an advisory lock, so two jest workers build it once) and copied by `CREATE DATABASE ...
 * TEMPLATE` for each test file: a file's boot then finds nothing to migrate. Outside a jest run
 * with the global setup there is no run id: undefined, and the caller migrates an empty database.
 */
export function migratedTemplate<C extends BaseConfig>(
  definition: ServiceDefinition<C>,
): Promise<string | undefined> {
  const run = process.env[TEST_RUN_ENV];
  if (!run || !/^[a-z0-9]+$/.test(run)) return Promise.resolve(undefined);
  const digest = createHash('sha256')
    .update(definition.migrations.map((m) => `${m.name}\n${m.toString()}`).join('\n'))
    .digest('hex')
    .slice(0, 12);
  const name = `${TEMPLATE_PREFIX}${run}_${definition.name.replace(/[^a-z]/g, '')}_${digest}`;
  let template = built.get(name);
  if (!template) {
    template = build(name, definition);
    built.set(name, template);
  }
  return template;
}

async function build<C extends BaseConfig>(name: string, definition: ServiceDefinition<C>): Promise<string> {
  const admin = new Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      // Built under another name and renamed when complete: a worker killed mid-way leaves no
      // half-migrated template behind under the name others copy.
      const building = `${name.slice(0, 40)}_b${newId().replace(/-/g, '').slice(-8)}`;
      await admin.query(`CREATE DATABASE "${building}"`);
      const dataSource = createDataSource({
        url: withDatabase(TEST_POSTGRES_URL, building),
        entities: definition.entities,
        migrations: definition.migrations,
        poolSize: 2,
        applicationName: `${definition.name}-template`,
      });
      try {
        await openDatabase(dataSource);
      } finally {
        await dataSource.destroy();
      }
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    }
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch(() => undefined);
    await admin.end();
  }
}
