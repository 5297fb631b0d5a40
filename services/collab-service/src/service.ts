import {
  BusProbeEntity,
  busEntities,
  CreateBusProbes1763700000001,
  CreateBusTables1763700000000,
  createBusProbeModule,
  type ServiceDefinition,
} from '@hwp/platform';
import { createApp } from './app';
import type { CollabConfig } from './config';

/** The collab-service: its schema, its app and its consumers, for main.ts, the embedded runner and tests. */
export const collabService: ServiceDefinition<CollabConfig> = {
  name: 'collab-service',
  entities: [...busEntities, BusProbeEntity],
  migrations: [CreateBusTables1763700000000, CreateBusProbes1763700000001],
  blobRoutePrefix: '/v1/blobs',
  createApp,
  async registerConsumers(deps) {
    await createBusProbeModule(deps).registerConsumer();
  },
};

/** Database the service owns when it runs on a shared Postgres server. */
export const COLLAB_DATABASE = 'collab';
