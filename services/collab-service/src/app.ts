import { createBusProbeModule, createHttpApp, mountBlobRoutes, type PlatformDeps } from '@hwp/platform';
import type { Express } from 'express';
import type { CollabConfig } from './config';

export const OPENAPI_INFO = {
  title: 'Hardware Engineering Platform: collaboration host',
  version: '1',
  description:
    'Workspaces, parts, BOMs, files with optimistic concurrency, locks, reviews, tasks and the SSE stream.',
  securitySchemes: {
    opsToken: {
      type: 'http',
      scheme: 'bearer',
      description: 'OPS_TOKEN of the deployment (operator routes)',
    },
  },
};

/** Builds the collab-service express app from its dependencies; it does not listen. */
export function createApp(deps: PlatformDeps<CollabConfig>): Express {
  const probes = createBusProbeModule(deps);
  return createHttpApp({
    service: deps.service,
    logger: deps.logger,
    jsonLimitBytes: deps.config.JSON_BODY_LIMIT_KB * 1024,
    rawBodyPrefixes: [`${deps.blobRoutePrefix}/`],
    openapi: OPENAPI_INFO,
    readiness: {
      database: async () => {
        await deps.dataSource.query('SELECT 1');
      },
      broker: () => deps.bus.transport.ping(),
      storage: () => deps.blobs.ping(),
    },
    mount: (api) => {
      probes.mount(api, '/v1/system');
      mountBlobRoutes(api, deps);
    },
  });
}
