import {
  BusProbeEntity,
  busEntities,
  CreateBusProbes1763700000001,
  CreateBusTables1763700000000,
  createBusProbeModule,
  type ServiceDefinition,
} from '@hwp/platform';
import { createApp } from './app';
import type { ApiConfig } from './config';

/** The api-service: its schema, its app and its consumers, for main.ts, the embedded runner and tests. */
export const apiService: ServiceDefinition<ApiConfig> = {
  name: 'api-service',
  entities: [...busEntities, BusProbeEntity],
  migrations: [CreateBusTables1763700000000, CreateBusProbes1763700000001],
  blobRoutePrefix: '/blobs',
  createApp,
  async registerConsumers(deps) {
    await createBusProbeModule(deps).registerConsumer();
  },
};

/** Database the service owns when it runs on a shared Postgres server. */
export const API_DATABASE = 'api';
