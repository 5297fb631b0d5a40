import { cleanEnv, EnvMissingError, str } from 'envalid';
import {
  amqpUrlList,
  durationMs,
  flag,
  httpUrl,
  oneOf,
  portNumber,
  positiveInt,
  splitUrlList,
  trustProxy,
  urlOf,
} from './config-validators';

export * from './config-validators';

/**
 * Thrown when the environment does not validate. `problems` maps each bad variable to a phrase
 * that reads after its name; the message is one line naming every one of them.
 */
export class ConfigError extends Error {
  constructor(readonly problems: Record<string, string>) {
    super(
      `invalid configuration: ${Object.entries(problems)
        .map(([name, why]) => `${name} ${why}`)
        .join('; ')}`,
    );
    this.name = 'ConfigError';
  }
}

/**
 * `load(process.env)`, or, when a value is bad, one line `<name>: invalid configuration: ...` on
 * stderr and exit code 1 (no stack). Entry points call it before requiring the rest of their code,
 * so a refused configuration costs a tenth of a second, not a service's whole module graph.
 */
export function configOrExit<C>(name: string, load: (env: NodeJS.ProcessEnv) => C): C {
  try {
    return load(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${name}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Variables both services read (docs/configuration.md lists them). `defaultPort` differs per service. */
export function baseConfigSpecs(defaultPort: number) {
  return {
    NODE_ENV: oneOf(['development', 'test', 'production'] as const, {
      default: 'development',
      desc: '`development`, `test` or `production` (production refuses generated secrets and open ops routes)',
    }),
    PORT: portNumber({ default: defaultPort, desc: 'HTTP port' }),
    HOST: str({ default: '0.0.0.0', desc: 'Interface to listen on' }),
    TRUST_PROXY: trustProxy({
      default: false,
      desc: 'Proxies whose X-Forwarded-For is believed: hop count or addresses/subnets; empty = none',
    }),
    LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      default: 'info',
      desc: 'pino level: `fatal` ... `trace`, or `silent`',
    }),
    DATABASE_URL: urlOf(['postgres:', 'postgresql:'], {
      default: undefined,
      desc: 'Postgres URL; absent = the embedded PostgreSQL server in DATA_DIR',
    }),
    DATA_DIR: str({ default: '.data', desc: 'Folder of the embedded database, blobs and keys' }),
    AMQP_URL: amqpUrlList({
      default: undefined,
      desc: 'RabbitMQ URL, or the URLs of the nodes of a RabbitMQ cluster separated by commas (the first that answers is used, another when it goes); absent = in-process bus',
    }),
    AMQP_URLS: amqpUrlList({
      default: undefined,
      desc: 'The same as AMQP_URL, by the name a list reads best under; set one of the two',
    }),
    AMQP_PUBLISH_WAIT_MS: durationMs(
      {
        default: 3000,
        desc: 'How long a publish waits for the broker connection while it is moving to another node; after that the outbox keeps the event and the relay retries (0: fail at once)',
      },
      0,
    ),
    AMQP_NAMESPACE: str({
      default: '',
      desc: 'Prefix of exchange and queue names (several environments on one broker)',
    }),
    AMQP_QUEUE_EXPIRES_MS: durationMs({
      default: undefined,
      desc: 'Unused queues are deleted after this long (ephemeral environments only)',
    }),
    AMQP_QUEUE_TYPE: oneOf(['quorum', 'classic'] as const, {
      default: 'quorum',
      desc: "Type of the consumers' work queues: `quorum` (replicated; the broker bounds redeliveries) or `classic` (a broker without quorum queues); see docs/bus.md before changing it on a live broker",
    }),
    S3_BUCKET: str({ default: undefined, desc: 'Bucket; absent = local blob folder' }),
    S3_ENDPOINT: httpUrl({ default: undefined, desc: 'S3-compatible endpoint (MinIO); absent = AWS' }),
    S3_REGION: str({ default: 'us-east-1', desc: 'Region of the bucket' }),
    S3_ACCESS_KEY_ID: str({
      default: undefined,
      desc: 'S3 credentials, with S3_SECRET_ACCESS_KEY (both or neither); unset: the SDK default chain',
    }),
    S3_SECRET_ACCESS_KEY: str({ default: undefined, desc: 'Secret of S3_ACCESS_KEY_ID' }),
    S3_FORCE_PATH_STYLE: flag({ default: true, desc: 'Path-style bucket addressing (MinIO)' }),
    S3_PUBLIC_ENDPOINT: httpUrl({ default: undefined, desc: 'Endpoint written into pre-signed URLs' }),
    PUBLIC_API_URL: httpUrl({
      default: undefined,
      desc: 'Where clients reach the API host (behind a gateway: the gateway). Every URL the API host hands out starts with it; unset: http://127.0.0.1:PORT on the API host',
    }),
    PUBLIC_COLLAB_URL: httpUrl({
      default: undefined,
      desc: 'Where clients reach the collaboration host (behind a gateway: the gateway). Every URL the collaboration host hands out starts with it; unset: http://127.0.0.1:PORT on the collaboration host',
    }),
    PUBLIC_BASE_URL: httpUrl({
      default: undefined,
      desc: "Deprecated alias of the running host's own PUBLIC_API_URL or PUBLIC_COLLAB_URL (used when that is unset; must not differ from it)",
    }),
    SHUTDOWN_TIMEOUT_MS: durationMs({
      default: 10_000,
      desc: 'Budget of a graceful shutdown on SIGTERM/SIGINT (drain requests and streams, close bus and database)',
    }),
    JSON_BODY_LIMIT_KB: positiveInt({ default: 1024, desc: 'Largest JSON body (413 above)' }),
    MAX_UPLOAD_MB: positiveInt({ default: 200, desc: 'Largest upload through the service (413 above)' }),
    BUS_MAX_ATTEMPTS: positiveInt({
      default: 5,
      desc: 'Deliveries before a failing message is dead-lettered',
    }),
    BUS_RETRY_DELAY_MS: durationMs({ default: 1000, desc: 'Delay between redeliveries of a failed message' }),
    OUTBOX_POLL_MS: durationMs({ default: 250, desc: 'Outbox relay poll interval (commits also nudge it)' }),
    BUS_DEGRADED_AFTER_MS: durationMs({
      default: 30_000,
      desc: '/readyz reports the bus degraded when an unpublished outbox event or a consumer message waits longer',
    }),
    DB_POOL_SIZE: positiveInt({ default: 10, desc: 'Database connections per service process' }),
    BUS_MAX_HANDLER_TRANSACTIONS: positiveInt({
      default: undefined,
      desc: 'Inbox transactions all consumers hold at once (unset: half of DB_POOL_SIZE; below it), the rest of the pool kept for requests',
    }),
    OPS_TOKEN: str({ default: undefined, desc: 'Bearer token of the /system ops routes' }),
    OTEL_EXPORTER_OTLP_ENDPOINT: str({
      default: undefined,
      desc: 'OTLP/HTTP collector base URL; spans are exported only when set',
    }),
    OTEL_EXPORTER_OTLP_HEADERS: str({ default: undefined, desc: 'key=value,... sent with each export' }),
    OTEL_SERVICE_NAME: str({ default: undefined, desc: 'service.name of the spans (default the service)' }),
    OTEL_BSP_SCHEDULE_DELAY: durationMs({ default: 5000, desc: 'Wait before a batch of spans is exported' }),
    CORS_ORIGINS: str({
      default: undefined,
      desc: 'Origins whose browser pages may call this host (comma list, * for any without credentials); default none in production, common dev servers otherwise',
    }),
    BLOB_SIGNING_KEY: str({ default: undefined, desc: 'HMAC key of local-folder pre-signed URLs' }),
    BLOB_DIR: str({ default: undefined, desc: 'Local blob folder; default DATA_DIR/<service>/blobs' }),
  };
}

/** Rules across variables: the problems (variable -> phrase) of values that each validated. */
export type ConfigCheck = (values: Record<string, unknown>) => Partial<Record<string, string>>;

/** S3 credentials travel in pairs. */
const s3Credentials: ConfigCheck = (c) =>
  c.S3_BUCKET !== undefined && (c.S3_ACCESS_KEY_ID === undefined) !== (c.S3_SECRET_ACCESS_KEY === undefined)
    ? { S3_ACCESS_KEY_ID: 'must be set together with S3_SECRET_ACCESS_KEY' }
    : {};

/** AMQP_URLS is another spelling of AMQP_URL, never a second broker. */
const oneBrokerList: ConfigCheck = (c) =>
  typeof c.AMQP_URL === 'string' && typeof c.AMQP_URLS === 'string' && c.AMQP_URL !== c.AMQP_URLS
    ? { AMQP_URLS: 'differs from AMQP_URL: set one of the two' }
    : {};

/** The broker's URL, or those of its cluster's nodes in order (AMQP_URLS or AMQP_URL); none: in-process bus. */
export function brokerUrls(config: { readonly AMQP_URL?: string; readonly AMQP_URLS?: string }): string[] {
  return splitUrlList(config.AMQP_URLS ?? config.AMQP_URL ?? '');
}

/** Consumers' transactions never take the whole pool: requests keep at least one connection. */
const handlersBelowPool: ConfigCheck = (c) =>
  typeof c.BUS_MAX_HANDLER_TRANSACTIONS === 'number' &&
  typeof c.DB_POOL_SIZE === 'number' &&
  c.BUS_MAX_HANDLER_TRANSACTIONS >= c.DB_POOL_SIZE
    ? {
        BUS_MAX_HANDLER_TRANSACTIONS: `must be below DB_POOL_SIZE (${c.DB_POOL_SIZE}): requests need connections too`,
      }
    : {};

/** The setting naming where clients reach a host: each host hands out URLs under its own. */
export type PublicUrlSetting = 'PUBLIC_API_URL' | 'PUBLIC_COLLAB_URL';

export interface LoadConfigOptions {
  /**
   * The running host's own public URL setting. The deprecated PUBLIC_BASE_URL stands in for it when
   * it is unset; after loading, PUBLIC_BASE_URL holds this host's own URL whichever variable gave it.
   */
  ownPublicUrl?: PublicUrlSetting;
}

const withoutTrailingSlash = (url: unknown) =>
  typeof url === 'string' ? url.replace(/\/+$/, '') : undefined;

/** PUBLIC_BASE_URL may stand for the host's own setting, never contradict it (which one would win?). */
const publicUrlAlias =
  (own: PublicUrlSetting): ConfigCheck =>
  (c) => {
    const [alias, mine] = [withoutTrailingSlash(c.PUBLIC_BASE_URL), withoutTrailingSlash(c[own])];
    return alias !== undefined && mine !== undefined && alias !== mine
      ? { PUBLIC_BASE_URL: `is a deprecated alias of ${own} and differs from it: set ${own} alone` }
      : {};
  };

/**
 * Where clients reach the running host, without a trailing slash: its PUBLIC_API_URL or
 * PUBLIC_COLLAB_URL (the loader resolved it into PUBLIC_BASE_URL), else `http://127.0.0.1:PORT`,
 * the embedded default. Never the request's Host or X-Forwarded-* headers: every URL a host hands
 * out is the same whoever asks and however the request came in.
 */
export function ownPublicUrl(config: { readonly PUBLIC_BASE_URL?: string; readonly PORT: number }): string {
  return config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`;
}

/**
 * Validates `env` against `specs` and `checks` and returns the typed, frozen result, or throws one
 * ConfigError naming every missing or malformed variable.
 */
export function loadConfig<S extends object>(
  env: NodeJS.ProcessEnv,
  specs: S,
  checks: ConfigCheck[] = [],
  options: LoadConfigOptions = {},
) {
  const own = options.ownPublicUrl;
  // Empty strings mean "unset" (docker-compose writes `VAR=` for blanks).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const cleaned = cleanEnv(present, specs, {
    reporter: ({ errors, env: values }) => {
      const problems: Record<string, string> = {};
      for (const [name, error] of Object.entries(errors)) {
        if (!error) continue;
        problems[name] = error instanceof EnvMissingError ? 'is required' : (error as Error).message;
      }
      const aliasCheck = own ? [publicUrlAlias(own)] : [];
      for (const check of [s3Credentials, handlersBelowPool, oneBrokerList, ...aliasCheck, ...checks]) {
        for (const [name, why] of Object.entries(check(values as Record<string, unknown>))) {
          if (why) problems[name] ??= why;
        }
      }
      if (Object.keys(problems).length > 0) throw new ConfigError(problems);
    },
  });
  const values: Record<string, unknown> = { ...cleaned };
  for (const name of ['PUBLIC_API_URL', 'PUBLIC_COLLAB_URL', 'PUBLIC_BASE_URL'])
    if (name in values) values[name] = withoutTrailingSlash(values[name]);
  if (own) {
    values[own] ??= values.PUBLIC_BASE_URL;
    values.PUBLIC_BASE_URL = values[own];
  }
  return Object.freeze(values as typeof cleaned);
}
