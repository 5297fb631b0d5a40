/** One jest run for the whole monorepo; tests sit next to the code they cover. */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/?(*.)test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
  },
  moduleNameMapper: {
    '^@hwp/(contracts|platform)$': '<rootDir>/packages/$1/src',
    '^@hwp/platform/test-kit$': '<rootDir>/packages/platform/src/test-kit',
    '^@hwp/(api-service|collab-service)$': '<rootDir>/services/$1/src',
  },
  setupFiles: ['reflect-metadata'],
  testTimeout: 60000,
  maxWorkers: 2,
};
