/**
 * The tests that start clusters of their own (three RabbitMQ nodes, a Postgres server restarted
 * under load, several service processes each): run one at a time after the rest, so they neither
 * starve the other worker on a two-core machine nor are starved by it. `pnpm test` runs both configs.
 */
const base = require('./jest.config.js');

const { testMatch: _all, ...rest } = base;

module.exports = {
  ...rest,
  testRegex: base.heavyTests.map((path) => path.replace(/[.]/g, '\\.')),
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  maxWorkers: 1,
};
