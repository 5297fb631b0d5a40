import { QueueMismatchError } from './bus';
import { EmbeddedDatabaseError } from './db/runner-lock';
import { type BaseConfig, type ServiceDefinition } from './deps';
import { Lifecycle } from './lifecycle';
import { createLogger } from './logger';
import { createServiceRuntime } from './runtime';
import { listenFailure } from './start-failure';

/**
 * Process entry of one service, given its configuration (the entry point checked it first with
 * configOrExit, before loading the service's code): build the runtime, listen, drain on
 * SIGTERM/SIGINT. A work queue of another type than AMQP_QUEUE_TYPE stops it with one line naming
 * the migration.
 */
export async function runServiceMain<C extends BaseConfig>(
  definition: ServiceDefinition<C>,
  config: C,
): Promise<void> {
  const logger = createLogger({ service: definition.name, level: config.LOG_LEVEL });
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.installSignalHandlers();
  try {
    const runtime = await createServiceRuntime(definition, config, { lifecycle, logger });
    await runtime.listen();
  } catch (error) {
    const listening = listenFailure(error, { portVariable: 'PORT', port: config.PORT, host: config.HOST });
    if (listening) process.stderr.write(`${definition.name}: cannot start: ${listening}\n`);
    else if (error instanceof EmbeddedDatabaseError || error instanceof QueueMismatchError)
      process.stderr.write(`${definition.name}: ${error.message}\n`);
    else logger.fatal({ err: error }, 'start failed');
    await lifecycle.shutdown();
    process.exit(1);
  }
}
