const { Client } = require('pg');

/** Hours after which a template of a run that never reached its teardown (killed) is dropped. */
const ABANDONED_AFTER_HOURS = 6;

/** Drops this run's template databases, and those of runs killed before their teardown. */
module.exports = async () => {
  const run = process.env.HWP_TEST_RUN_ID;
  if (!run) return;
  const admin = new Client({
    connectionString: process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  await admin.connect();
  try {
    const { rows } = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'tpl\\_r%'");
    const cutoff = Date.now() - ABANDONED_AFTER_HOURS * 3_600_000;
    for (const { datname } of rows) {
      const started = Number.parseInt(datname.slice(5, 13), 36);
      if (datname.startsWith(`tpl_${run}_`) || started < cutoff) {
        await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      }
    }
  } finally {
    await admin.end();
  }
};
