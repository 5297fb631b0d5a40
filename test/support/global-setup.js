const { generateKeyPairSync } = require('node:crypto');

/**
 * One id per jest run (workers inherit the environment): each service's migrated template
 * database is built once per run under it (packages/platform/src/test-kit/migrated-template.ts).
 * One RSA key per run for the test kit's token issuer (token-issuer.ts) and one for the API host
 * (api-test-kit.ts): a 2048-bit key took 50-500 ms to make in every test file that needed one.
 */
const rsaKeyPem = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();

module.exports = async () => {
  process.env.HWP_TEST_ISSUER_KEY ??= rsaKeyPem();
  // And one for the API host's test boots (api-test-kit.ts): each generated its own, 0.2-0.5 s of CPU.
  process.env.HWP_TEST_API_KEY ??= rsaKeyPem();
  // HWP_TEST_TEMPLATES=off: every test file migrates its own empty database (the old way, to compare).
  if (process.env.HWP_TEST_TEMPLATES === 'off') return;
  process.env.HWP_TEST_RUN_ID = `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
};
