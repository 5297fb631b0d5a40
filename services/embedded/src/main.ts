import type { EmbeddedPostgres } from '@hwp/platform';
import { configOrExit } from '@hwp/platform/config';
import { loadEmbeddedConfig } from './config';

/**
 * Quick-start runner: both services in one Node process on the embedded default (a private
 * PostgreSQL server in the data folder with a database per service, local blob folders, one
 * in-process bus shared by both so events still flow between them). docker-compose runs them as
 * separate containers over Postgres, RabbitMQ and S3 instead.
 */
async function main(): Promise<void> {
  const configs = configOrExit('embedded', loadEmbeddedConfig);
  // Both services' code is loaded once the configuration holds: a bad value is refused at once.
  const { apiService } = require('@hwp/api-service') as typeof import('@hwp/api-service');
  const { collabService } = require('@hwp/collab-service') as typeof import('@hwp/collab-service');
  const {
    createLogger,
    createServiceRuntime,
    EmbeddedDatabaseError,
    Lifecycle,
    listenFailure,
    MemoryBroker,
    startEmbeddedPostgres,
  } = require('@hwp/platform') as typeof import('@hwp/platform');
  const logger = createLogger({ service: 'embedded', level: configs.api.LOG_LEVEL });
  const lifecycle = new Lifecycle(logger, configs.api.SHUTDOWN_TIMEOUT_MS);
  lifecycle.installSignalHandlers();
  const broker = new MemoryBroker(logger);
  // Which listen failed decides the variable a taken port is reported under.
  let listening = { portVariable: 'API_PORT', port: configs.api.PORT, host: configs.api.HOST };
  try {
    let embeddedPostgres: EmbeddedPostgres | undefined;
    if (!configs.api.DATABASE_URL) {
      const startedAt = Date.now();
      embeddedPostgres = await startEmbeddedPostgres({
        dataDir: configs.api.DATA_DIR,
        log: (message) => logger.info(message),
      });
      // Registered first, so it stops last: after both services have drained and closed their pools.
      lifecycle.onShutdown('embedded-postgres', embeddedPostgres.stop);
      logger.info({ port: embeddedPostgres.port, ms: Date.now() - startedAt }, 'embedded PostgreSQL ready');
    }
    const api = await createServiceRuntime(apiService, configs.api, {
      lifecycle,
      embeddedPostgres,
      broker,
      logger: createLogger({ service: apiService.name, level: configs.api.LOG_LEVEL }),
    });
    const collab = await createServiceRuntime(collabService, configs.collab, {
      lifecycle,
      embeddedPostgres,
      broker,
      logger: createLogger({ service: collabService.name, level: configs.collab.LOG_LEVEL }),
    });
    await api.listen();
    listening = { portVariable: 'COLLAB_PORT', port: configs.collab.PORT, host: configs.collab.HOST };
    await collab.listen();
    process.stdout.write(
      [
        '',
        `API host:           http://localhost:${configs.api.PORT}  (docs: /docs)`,
        `Collaboration host: http://localhost:${configs.collab.PORT}  (docs: /docs)`,
        `Data folder:        ${configs.api.DATA_DIR}`,
        '',
      ].join('\n'),
    );
  } catch (error) {
    const taken = listenFailure(error, listening);
    if (taken) {
      process.stderr.write(`embedded: cannot start: ${taken}\n`);
    } else if (error instanceof EmbeddedDatabaseError) {
      process.stderr.write(`embedded: ${error.message}\n`);
    } else {
      logger.fatal({ err: error }, 'start failed');
    }
    await lifecycle.shutdown();
    process.exit(1);
  }
}

void main();
