import type { Express } from 'express';
import { busEntities, busHealth, busMigrations } from './bus';
import type { BaseConfig, PlatformDeps } from './deps';
import { CreateRateLimitCounters1763700000002 } from './http/1763700000002-create-rate-limit-counters';
import type { ApiRouter } from './http/api-router';
import { mountBlobRoutes } from './http/blob-routes';
import { corsOrigins } from './http/cors';
import { createHttpApp, type DegradationCheck } from './http/create-app';
import type { OpenApiInfo } from './http/openapi';
import { CreateBusProbes1763700000001 } from './ops/1763700000001-create-bus-probes';
import { BusProbeEntity } from './ops/bus-probe.entity';
import { createBusProbeModule } from './ops/bus-probe.module';
import { createDeadLetterModule } from './ops/dead-letter.module';
import { mountMetrics } from './ops/metrics.routes';

/**
 * Tables every service has (outbox, inbox, dead letters, bus probes, rate-limit counters); services spread these
 * into their lists.
 */
export const platformEntities = [...busEntities, BusProbeEntity];
export const platformMigrations = [
  ...busMigrations,
  CreateBusProbes1763700000001,
  CreateRateLimitCounters1763700000002,
];

export interface ServiceAppOptions {
  openapi: Omit<OpenApiInfo, 'version'> & { version?: string };
  /** Where the operator routes live (`/system` on the API host, `/v1/system` on collab). */
  opsPrefix: string;
  /** The features' quality checks for /readyz, besides the bus's. */
  health?: Record<string, DegradationCheck>;
  /** The service's own feature routes. */
  mount?: (api: ApiRouter, app: Express) => void;
}

/**
 * The app of a service: the shared HTTP conventions, readiness of database, broker and storage (and
 * whether events flow), operator routes, local pre-signed blob URLs, then the service's features.
 */
export function createServiceApp<C extends BaseConfig>(
  deps: PlatformDeps<C>,
  options: ServiceAppOptions,
): Express {
  const probes = createBusProbeModule(deps);
  const deadLetters = createDeadLetterModule(deps);
  return createHttpApp({
    service: deps.service,
    logger: deps.logger,
    jsonLimitBytes: deps.config.JSON_BODY_LIMIT_KB * 1024,
    trustProxy: deps.config.TRUST_PROXY,
    corsOrigins: corsOrigins(deps.config),
    requestMetrics: deps.metrics.observer(),
    servedOverHttps: deps.config.PUBLIC_BASE_URL?.startsWith('https:') ?? false,
    rawBodyPrefixes: [`${deps.blobRoutePrefix}/`],
    openapi: {
      version: '1',
      // Where clients reach the service (its PUBLIC_API_URL or PUBLIC_COLLAB_URL, which the loader
      // resolved into PUBLIC_BASE_URL); unconfigured, the host serving the document.
      servers: [
        deps.config.PUBLIC_BASE_URL
          ? { url: deps.config.PUBLIC_BASE_URL, description: 'Where clients reach this host' }
          : { url: '/', description: 'The host serving this document' },
      ],
      ...options.openapi,
      securitySchemes: {
        opsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'OPS_TOKEN of the deployment (operator routes)',
        },
        ...options.openapi.securitySchemes,
      },
    },
    readiness: {
      database: async () => {
        await deps.dataSource.query('SELECT 1');
      },
      broker: () => deps.bus.transport.ping(),
      storage: () => deps.blobs.ping(),
    },
    degradation: {
      bus: () => busHealth(deps.bus, deps.config.BUS_DEGRADED_AFTER_MS),
      ...options.health,
    },
    mount: (api, app) => {
      probes.mount(api, options.opsPrefix);
      deadLetters.mount(api, options.opsPrefix);
      mountMetrics(api, deps);
      mountBlobRoutes(api, deps);
      options.mount?.(api, app);
    },
  });
}

/** Consumers every service runs (bus probes). */
export async function registerPlatformConsumers<C extends BaseConfig>(deps: PlatformDeps<C>): Promise<void> {
  await createBusProbeModule(deps).registerConsumer();
}
