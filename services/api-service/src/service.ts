import {
  platformEntities,
  platformMigrations,
  registerPlatformConsumers,
  type ServiceDefinition,
} from '@hwp/platform';
import { createApp } from './app';
import type { ApiConfig } from './config';

/** The api-service: its schema, its app and its consumers, for main.ts, the embedded runner and tests. */
export const apiService: ServiceDefinition<ApiConfig> = {
  name: 'api-service',
  entities: [...platformEntities],
  migrations: [...platformMigrations],
  blobRoutePrefix: '/blobs',
  createApp,
  registerConsumers: registerPlatformConsumers,
};
