import {
  platformEntities,
  platformMigrations,
  registerPlatformConsumers,
  type ServiceDefinition,
} from '@hwp/platform';
import { createApp } from './app';
import type { CollabConfig } from './config';

/** The collab-service: its schema, its app and its consumers, for main.ts, the embedded runner and tests. */
export const collabService: ServiceDefinition<CollabConfig> = {
  name: 'collab-service',
  entities: [...platformEntities],
  migrations: [...platformMigrations],
  blobRoutePrefix: '/v1/blobs',
  createApp,
  registerConsumers: registerPlatformConsumers,
};
