/**
 * The wire types of both hosts, one folder per area; each folder's index lists its modules, and every
 * name stays importable from `@hwp/contracts`.
 */
export * from './auth';
export * from './boms';
export * from './common';
export * from './events';
export * from './files';
export * from './images';
export * from './parts';
export * from './reviews';
export * from './shared-files';
export * from './tenants';
export * from './viewer';
export * from './workspaces';
