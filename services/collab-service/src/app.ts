import { createServiceApp, type PlatformDeps } from '@hwp/platform';
import type { Express } from 'express';
import type { CollabConfig } from './config';

/** Builds the collab-service express app from its dependencies; it does not listen. */
export function createApp(deps: PlatformDeps<CollabConfig>): Express {
  return createServiceApp(deps, {
    openapi: {
      title: 'Hardware Engineering Platform: collaboration host',
      description:
        'Workspaces, parts, BOMs, files with optimistic concurrency, locks, reviews, tasks and the SSE stream.',
    },
    opsPrefix: '/v1/system',
  });
}
