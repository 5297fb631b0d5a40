import { bool, cleanEnv, makeValidator, num, port, str, url } from 'envalid';

/** Thrown when the environment does not validate; the message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: Record<string, string>) {
    super(
      `Invalid configuration: ${Object.entries(problems)
        .map(([name, why]) => `${name} (${why})`)
        .join('; ')}`,
    );
    this.name = 'ConfigError';
  }
}

const positiveInt = makeValidator<number>((input) => {
  const value = Number(input);
  if (!Number.isInteger(value) || value <= 0) throw new Error('must be a positive integer');
  return value;
});

/**
 * `TRUST_PROXY`: the proxies whose X-Forwarded-For is believed (express's `trust proxy`): a hop count
 * (`1` = one gateway in front) or addresses, subnets and express's names (`loopback`, `uniquelocal`)
 * separated by commas. Empty trusts nobody. `true` (trust everyone) is refused: any client could
 * then choose its own address and escape every per-IP limit.
 */
export const trustProxy = makeValidator<false | number | string[]>((input) => {
  const value = String(input).trim();
  if (value === '' || value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  if (value === 'true' || value === '*') {
    throw new Error('must name the trusted proxies (a hop count or addresses), not trust everyone');
  }
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
});

/** Variables both services read (README lists them). `defaultPort` differs per service. */
export function baseConfigSpecs(defaultPort: number) {
  return {
    NODE_ENV: str({ choices: ['development', 'test', 'production'], default: 'development' }),
    PORT: port({ default: defaultPort, desc: 'HTTP port' }),
    HOST: str({ default: '0.0.0.0', desc: 'Interface to listen on' }),
    TRUST_PROXY: trustProxy({
      default: false,
      desc: 'Proxies whose X-Forwarded-For is believed: hop count or addresses/subnets; empty = none',
    }),
    LOG_LEVEL: str({
      choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
    }),
    DATABASE_URL: url({
      default: undefined,
      desc: 'Postgres URL; absent = the embedded PostgreSQL server in DATA_DIR',
    }),
    DATA_DIR: str({ default: '.data', desc: 'Folder of the embedded database, blobs and keys' }),
    AMQP_URL: url({ default: undefined, desc: 'RabbitMQ URL; absent = in-process bus' }),
    AMQP_NAMESPACE: str({
      default: '',
      desc: 'Prefix of exchange and queue names (several environments on one broker)',
    }),
    AMQP_QUEUE_EXPIRES_MS: num({
      default: undefined,
      desc: 'Unused queues are deleted after this long (ephemeral environments only)',
    }),
    S3_BUCKET: str({ default: undefined, desc: 'Bucket; absent = local blob folder' }),
    S3_ENDPOINT: url({ default: undefined, desc: 'S3-compatible endpoint (MinIO); absent = AWS' }),
    S3_REGION: str({ default: 'us-east-1' }),
    S3_ACCESS_KEY_ID: str({ default: undefined }),
    S3_SECRET_ACCESS_KEY: str({ default: undefined }),
    S3_FORCE_PATH_STYLE: bool({ default: true }),
    S3_PUBLIC_ENDPOINT: url({ default: undefined, desc: 'Endpoint written into pre-signed URLs' }),
    PUBLIC_BASE_URL: url({ default: undefined, desc: 'Where clients reach this service (links)' }),
    SHUTDOWN_TIMEOUT_MS: positiveInt({ default: 10_000 }),
    JSON_BODY_LIMIT_KB: positiveInt({ default: 1024 }),
    MAX_UPLOAD_MB: positiveInt({ default: 200 }),
    BUS_MAX_ATTEMPTS: positiveInt({ default: 5 }),
    BUS_RETRY_DELAY_MS: positiveInt({ default: 1000 }),
    OUTBOX_POLL_MS: positiveInt({ default: 250 }),
    BUS_DEGRADED_AFTER_MS: positiveInt({
      default: 30_000,
      desc: '/readyz reports the bus degraded when an unpublished outbox event or a consumer message waits longer',
    }),
    DB_POOL_SIZE: positiveInt({ default: 10 }),
    OPS_TOKEN: str({ default: undefined, desc: 'Bearer token of the /system ops routes' }),
    CORS_ORIGINS: str({ default: '' }),
    BLOB_SIGNING_KEY: str({ default: undefined, desc: 'HMAC key of local-folder pre-signed URLs' }),
    BLOB_DIR: str({ default: undefined, desc: 'Local blob folder; default DATA_DIR/<service>/blobs' }),
  };
}

export type EnvSpecs = Record<string, ReturnType<typeof str> | ReturnType<typeof num>>;

/**
 * Validates `env` against `specs` and returns the typed, frozen result, or throws one
 * ConfigError naming every missing or malformed variable.
 */
export function loadConfig<S extends object>(env: NodeJS.ProcessEnv, specs: S) {
  // Empty strings mean "unset" (docker-compose writes `VAR=` for blanks).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const cleaned = cleanEnv(present, specs, {
    reporter: ({ errors }) => {
      const problems: Record<string, string> = {};
      for (const [name, error] of Object.entries(errors)) {
        if (!error) continue;
        const message = (error as Error).message;
        problems[name] = message.includes('Missing') || message === '' ? 'missing' : message;
      }
      if (Object.keys(problems).length > 0) throw new ConfigError(problems);
    },
  });
  // Variables that are only valid together: S3 credentials travel in pairs.
  const c = cleaned as unknown as Record<string, unknown>;
  if (
    c.S3_BUCKET !== undefined &&
    (c.S3_ACCESS_KEY_ID === undefined) !== (c.S3_SECRET_ACCESS_KEY === undefined)
  ) {
    throw new ConfigError({ S3_ACCESS_KEY_ID: 'set together with S3_SECRET_ACCESS_KEY' });
  }
  return Object.freeze({ ...cleaned });
}
