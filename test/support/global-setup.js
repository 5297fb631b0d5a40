/**
 * One id per jest run (workers inherit the environment): each service's migrated template
 * database is built once per run under it (packages/platform/src/test-kit/migrated-template.ts).
 */
module.exports = async () => {
  // HWP_TEST_TEMPLATES=off: every test file migrates its own empty database (the old way, to compare).
  if (process.env.HWP_TEST_TEMPLATES === 'off') return;
  process.env.HWP_TEST_RUN_ID = `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
};
