/** One jest run for the whole monorepo; tests sit next to the code they cover. */

/** Tests that start clusters of their own: run alone afterwards (jest.heavy.config.js). */
const heavyTests = [
  'packages/platform/src/test-kit/rabbitmq-cluster.test.ts',
  'test/broker-cluster.test.ts',
  'test/postgres-restart.test.ts',
];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/?(*.)test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', ...heavyTests.map((path) => `<rootDir>/${path}`)],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
    // jose 6 and meshoptimizer ship ESM only. Node >= 20.19 require()s them natively (the built code
    // does); Jest's module loader does so only on Node >= 24.9, so before that they are compiled to
    // CommonJS here.
    '/node_modules/.+(/jose/dist/.+\\.js|/meshoptimizer/[^/]+\\.js|\\.mjs)$': [
      'ts-jest',
      {
        tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10', target: 'es2022' },
        diagnostics: false,
      },
    ],
  },
  // ... and so are the ES-module-only files @gltf-transform loads (property-graph, ktx-parse, ...).
  transformIgnorePatterns: [
    '/node_modules/(?!(\\.pnpm/(jose|meshoptimizer)@[^/]+/node_modules/)?(jose|meshoptimizer)/)(?!.+\\.mjs$)',
  ],
  moduleNameMapper: {
    '^@hwp/(contracts|platform|geometry)$': '<rootDir>/packages/$1/src',
    '^@hwp/platform/test-kit$': '<rootDir>/packages/platform/src/test-kit',
    // A service's configuration alone: its process checks it before loading the rest.
    '^@hwp/platform/config$': '<rootDir>/packages/platform/src/config',
    '^@hwp/(api-service|collab-service)/config$': '<rootDir>/services/$1/src/config',
    '^@hwp/geometry/test-kit$': '<rootDir>/packages/geometry/test/support/mesh-fixtures',
    '^@hwp/(api-service|collab-service)$': '<rootDir>/services/$1/src',
  },
  // One id per run: each service's migrations run once into a template database that every test
  // file's database is copied from (packages/platform/src/test-kit/migrated-template.ts).
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  setupFiles: ['reflect-metadata'],
  // Every supertest answer is checked against its app's OpenAPI document (status and JSON body).
  setupFilesAfterEnv: ['<rootDir>/test/support/validate-responses.ts'],
  testTimeout: 60000,
  maxWorkers: 2,
  // A worker that ran many files grew to 2.5 GB (each file's module registry leaves garbage behind),
  // near V8's heap limit, where collections are long and stop everything: a 1.2 s pause failed a
  // latency check of bom-import.test.ts in CI. Past 1 GB after a file, the worker is replaced.
  workerIdleMemoryLimit: '1GB',
};

// Read by jest.heavy.config.js (jest ignores keys it does not know, but warns: kept off the object).
Object.defineProperty(module.exports, 'heavyTests', { value: heavyTests, enumerable: false });
