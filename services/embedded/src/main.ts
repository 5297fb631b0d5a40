import { apiService } from '@hwp/api-service';
import { collabService } from '@hwp/collab-service';
import { ConfigError, createLogger, createServiceRuntime, Lifecycle, MemoryBroker } from '@hwp/platform';
import { loadEmbeddedConfig } from './config';

/**
 * Quick-start runner: both services in one Node process on the embedded default (PGlite in the
 * data folder, local blob folder, one in-process bus shared by both so events still flow between
 * them). docker-compose runs them as separate containers over RabbitMQ instead.
 */
async function main(): Promise<void> {
  let configs: ReturnType<typeof loadEmbeddedConfig>;
  try {
    configs = loadEmbeddedConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`embedded: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger({ service: 'embedded', level: configs.api.LOG_LEVEL });
  const lifecycle = new Lifecycle(logger, configs.api.SHUTDOWN_TIMEOUT_MS);
  lifecycle.installSignalHandlers();
  const broker = new MemoryBroker(logger);
  try {
    const api = await createServiceRuntime(apiService, configs.api, {
      lifecycle,
      broker,
      logger: createLogger({ service: apiService.name, level: configs.api.LOG_LEVEL }),
    });
    const collab = await createServiceRuntime(collabService, configs.collab, {
      lifecycle,
      broker,
      logger: createLogger({ service: collabService.name, level: configs.collab.LOG_LEVEL }),
    });
    await api.listen();
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
    logger.fatal({ err: error }, 'start failed');
    await lifecycle.shutdown();
    process.exit(1);
  }
}

void main();
