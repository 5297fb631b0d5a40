import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { createBlobStore } from './blob';
import { AmqpTransport, createBus, deadLetterTable, MemoryBroker } from './bus';
import { brokerUrls, ownPublicUrl } from './config';
import { createDataSource, ensureDatabaseExists, openDatabase } from './db/data-source';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './db/embedded-postgres';
import type { BaseConfig, PlatformDeps, ServiceDefinition } from './deps';
import { Lifecycle } from './lifecycle';
import { createLogger } from './logger';
import { ServiceMetrics } from './ops/metrics';
import { persistentSecret } from './secrets';
import { startTracing } from './tracing';

export type { BaseConfig, PlatformDeps, ServiceDefinition } from './deps';

export interface RuntimeOptions {
  lifecycle?: Lifecycle;
  logger?: Logger;
  /** Shared in-process broker (embedded mode runs both services in one process). */
  broker?: MemoryBroker;
  /** Embedded server shared by the services of one process; without it and DATABASE_URL, one is started. */
  embeddedPostgres?: EmbeddedPostgres;
}

/** The service's own database on the embedded server: `api` for api-service, like docker-compose. */
export function embeddedDatabaseName(service: string): string {
  return service.replace(/-service$/, '');
}

export interface ServiceRuntime<C extends BaseConfig> {
  deps: PlatformDeps<C>;
  app: Express;
  /** Listens on config.PORT/HOST; resolves with the server. */
  listen(): Promise<Server>;
  /** Closes everything the runtime opened (what shutdown does, without exiting). */
  close(): Promise<void>;
}

const OUTBOX_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Builds a service on whatever the configuration names: Postgres (or the embedded
 * PostgreSQL server in DATA_DIR), RabbitMQ or the in-process bus, S3 or a local folder. Migrations run before anything is served.
 */
export async function createServiceRuntime<C extends BaseConfig>(
  definition: ServiceDefinition<C>,
  config: C,
  options: RuntimeOptions = {},
): Promise<ServiceRuntime<C>> {
  const logger = options.logger ?? createLogger({ service: definition.name, level: config.LOG_LEVEL });
  const lifecycle = options.lifecycle ?? new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const serviceDir = resolve(config.DATA_DIR, definition.name);
  const closers: { name: string; close: () => Promise<void> }[] = [];
  const close = async () => {
    for (const { name, close: fn } of closers.splice(0).reverse()) {
      await fn().catch((error: unknown) => logger.warn({ err: error, resource: name }, 'close failed'));
    }
  };

  try {
    // First in, so closed last: the spans of the bus's final batch are still exported.
    const tracing = startTracing({
      service: config.OTEL_SERVICE_NAME ?? definition.name,
      endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
      headers: config.OTEL_EXPORTER_OTLP_HEADERS,
      scheduleDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
    });
    if (tracing.enabled) closers.push({ name: 'tracing', close: () => tracing.shutdown() });
    let databaseUrl = config.DATABASE_URL;
    if (!databaseUrl) {
      let server = options.embeddedPostgres;
      if (!server) {
        server = await startEmbeddedPostgres({
          dataDir: config.DATA_DIR,
          log: (message) => logger.info(message),
        });
        closers.push({ name: 'embedded-postgres', close: server.stop });
      }
      databaseUrl = server.url(embeddedDatabaseName(definition.name));
    }
    await ensureDatabaseExists(databaseUrl);
    const dataSource = createDataSource({
      url: databaseUrl,
      entities: definition.entities,
      migrations: definition.migrations,
      poolSize: config.DB_POOL_SIZE,
      applicationName: definition.name,
    });
    const applied = await openDatabase(dataSource);
    closers.push({ name: 'database', close: () => dataSource.destroy() });
    if (applied.length) logger.info({ migrations: applied }, 'migrations applied');

    const brokers = brokerUrls(config);
    const transport = brokers.length
      ? new AmqpTransport({
          url: brokers,
          publishWaitMs: config.AMQP_PUBLISH_WAIT_MS,
          serviceName: definition.name,
          logger,
          maxAttempts: config.BUS_MAX_ATTEMPTS,
          retryDelayMs: config.BUS_RETRY_DELAY_MS,
          namespace: config.AMQP_NAMESPACE,
          queueExpiresMs: config.AMQP_QUEUE_EXPIRES_MS,
          queueType: config.AMQP_QUEUE_TYPE,
        })
      : // Each service stores the dead letters of its own queues in its own database.
        (options.broker ?? new MemoryBroker(logger)).transport(definition.name, {
          logger,
          deadLetterSink: deadLetterTable(dataSource),
        });
    const bus = createBus({
      serviceName: definition.name,
      dataSource,
      transport,
      logger,
      relayIntervalMs: config.OUTBOX_POLL_MS,
      maxAttempts: config.BUS_MAX_ATTEMPTS,
      retryDelayMs: config.BUS_RETRY_DELAY_MS,
      maxHandlerTransactions: config.BUS_MAX_HANDLER_TRANSACTIONS,
    });
    await bus.start();
    closers.push({ name: 'bus', close: () => bus.close() });
    // Published outbox rows are kept a week for forensics, then dropped.
    const purge = setInterval(
      () => {
        bus.relay.purgePublished(OUTBOX_RETENTION_MS).catch((error: unknown) => {
          logger.warn({ err: error }, 'outbox purge failed');
        });
      },
      60 * 60 * 1000,
    );
    purge.unref();
    closers.push({ name: 'outbox-purge', close: async () => clearInterval(purge) });

    const blobs = createBlobStore({
      s3: config.S3_BUCKET
        ? {
            bucket: config.S3_BUCKET,
            region: config.S3_REGION,
            endpoint: config.S3_ENDPOINT,
            forcePathStyle: config.S3_FORCE_PATH_STYLE,
            publicEndpoint: config.S3_PUBLIC_ENDPOINT,
            credentials:
              config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY
                ? { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY }
                : undefined,
          }
        : undefined,
      fsRoot: resolve(config.BLOB_DIR ?? join(serviceDir, 'blobs')),
      // Pre-signed URLs name where clients reach this host (the gateway routes the prefix here).
      publicBaseUrl: `${ownPublicUrl(config)}${definition.blobRoutePrefix}`,
      signingKey: config.BLOB_SIGNING_KEY ?? persistentSecret(serviceDir, 'blob-signing.key'),
    });
    if (blobs.driver === 's3') await (blobs as { ensureBucket?: () => Promise<void> }).ensureBucket?.();
    closers.push({ name: 'blobs', close: () => blobs.close() });

    const metrics = new ServiceMetrics(definition.name);
    metrics.observe(transport);
    metrics.watchDatabase(dataSource);
    const deps: PlatformDeps<C> = {
      service: definition.name,
      config,
      logger,
      dataSource,
      bus,
      blobs,
      lifecycle,
      metrics,
      blobRoutePrefix: definition.blobRoutePrefix,
    };
    await definition.registerConsumers?.(deps);
    const app = definition.createApp(deps);
    lifecycle.onShutdown(definition.name, close);
    return {
      deps,
      app,
      async listen() {
        const server = await lifecycle.listen(app, config.PORT, config.HOST);
        logger.info(
          {
            port: config.PORT,
            database: config.DATABASE_URL ? 'postgres' : 'embedded',
            bus: transport.kind,
            blobs: blobs.driver,
          },
          `${definition.name} listening on http://${config.HOST}:${config.PORT}`,
        );
        return server;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
