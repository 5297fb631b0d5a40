// The operator's command that re-creates one consumer's work queues keeping their messages:
//
//   node <@hwp/platform>/dist/bus/queue-migration-cli.js --queue <name> --pattern <key> [--pattern <key> ...]
//        [--max-attempts <n>] [--url <amqp url>]
//
// It reads the service's own environment (AMQP_URL, AMQP_NAMESPACE, AMQP_QUEUE_TYPE,
// AMQP_QUEUE_EXPIRES_MS, BUS_MAX_ATTEMPTS), so the queues get exactly the arguments the service will
// declare. A service that finds a queue of another type prints this command for it. docs/bus.md.
import { parseArgs } from 'node:util';
import { baseConfigSpecs, ConfigError, loadConfig } from '../config';
import { migrateWorkQueues, type WorkQueueMigrationReport } from './amqp-queue-migration';

const USAGE =
  'usage: queue-migration-cli --queue <queue> --pattern <routing-key pattern> [--pattern ...] [--max-attempts <n>] [--url <amqp url>]';

/** Parses the command line and environment, runs the migration; throws a one-line error on bad input. */
export async function runQueueMigration(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<WorkQueueMigrationReport> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      queue: { type: 'string' },
      pattern: { type: 'string', multiple: true },
      'max-attempts': { type: 'string' },
      url: { type: 'string' },
    },
    strict: true,
  });
  const config = loadConfig(env, baseConfigSpecs(0));
  // AMQP_URL may name several nodes of a cluster: any one of them reaches the queues.
  const configured: unknown = config.AMQP_URL;
  const url =
    values.url ?? (Array.isArray(configured) ? configured[0] : String(configured ?? '').split(',')[0]);
  const maxAttempts = Number(values['max-attempts'] ?? config.BUS_MAX_ATTEMPTS);
  if (!values.queue || !values.pattern?.length) throw new Error(USAGE);
  if (!url) throw new Error('AMQP_URL is not set (or pass --url)');
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new Error('--max-attempts must be a positive integer');
  return migrateWorkQueues({
    url,
    namespace: config.AMQP_NAMESPACE,
    queue: values.queue,
    patterns: values.pattern,
    settings: { type: config.AMQP_QUEUE_TYPE, maxAttempts, expiresMs: config.AMQP_QUEUE_EXPIRES_MS },
  });
}

if (require.main === module) {
  runQueueMigration(process.argv.slice(2), process.env).then(
    (report) => {
      process.stdout.write(`${JSON.stringify(report)}\n`);
    },
    (error: unknown) => {
      const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
      process.stderr.write(`queue migration failed: ${message}\n`);
      process.exit(1);
    },
  );
}
