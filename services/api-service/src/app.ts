import { createBusProbeModule, createHttpApp, mountBlobRoutes, type PlatformDeps } from '@hwp/platform';
import type { Express } from 'express';
import type { ApiConfig } from './config';

export const OPENAPI_INFO = {
  title: 'Hardware Engineering Platform: API host',
  version: '1',
  description:
    'Authentication, tenants, files with revisions, CAD metadata, previews, AI image tools and WebSocket updates.',
  securitySchemes: {
    opsToken: {
      type: 'http',
      scheme: 'bearer',
      description: 'OPS_TOKEN of the deployment (operator routes)',
    },
  },
};

/** Builds the api-service express app from its dependencies; it does not listen. */
export function createApp(deps: PlatformDeps<ApiConfig>): Express {
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
      probes.mount(api, '/system');
      mountBlobRoutes(api, deps);
    },
  });
}
