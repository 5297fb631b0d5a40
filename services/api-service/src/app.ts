import { createServiceApp, type PlatformDeps } from '@hwp/platform';
import type { Express } from 'express';
import type { ApiConfig } from './config';

/** Builds the api-service express app from its dependencies; it does not listen. */
export function createApp(deps: PlatformDeps<ApiConfig>): Express {
  return createServiceApp(deps, {
    openapi: {
      title: 'Hardware Engineering Platform: API host',
      description:
        'Authentication, tenants, files with revisions, CAD metadata, previews, AI image tools and WebSocket updates.',
    },
    opsPrefix: '/system',
  });
}
