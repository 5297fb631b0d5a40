import type { BaseConfig } from '@hwp/platform';
import {
  baseConfigSpecs,
  type ConfigCheck,
  durationMs,
  flag,
  httpUrl,
  integer,
  loadConfig,
  positiveInt,
} from '@hwp/platform/config';
import { str } from 'envalid';

/** Validated configuration of the collab-service (docs/configuration.md lists every variable). */
export interface CollabConfig extends BaseConfig {
  /** Where the API host publishes its access-token keys. */
  readonly AUTH_JWKS_URL: string;
  readonly AUTH_REVOCATIONS_URL?: string;
  readonly AUTH_REVOCATIONS_REFRESH_MS: number;
  readonly RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: number;
  readonly AUTH_ISSUER: string;
  readonly AUTH_AUDIENCE: string;
  /** Signs the session cookie; generated in DATA_DIR when unset outside production. */
  readonly SESSION_SECRET?: string;
  readonly SESSION_TTL_HOURS: number;
  readonly COOKIE_SECURE?: boolean;
  readonly REQUIRES_INVITATION: boolean;
  readonly BRANCH_SUFFIX_WRITES: boolean;
  readonly INVITATION_TTL_DAYS: number;
  readonly INVITATIONS_PER_MINUTE_PER_IP: number;
  readonly SITE_URL?: string;
  readonly SSE_HEARTBEAT_MS: number;
  readonly SSE_RETRY_MS: number;
  readonly SSE_MAX_CONNECTIONS_PER_USER: number;
  readonly EVENT_LOG_RETENTION_HOURS: number;
  readonly IMPORT_MAX_MB: number;
  readonly IMPORT_MAX_ROWS: number;
  readonly IMPORT_TIMEOUT_MS: number;
  readonly IMPORT_CONCURRENCY: number;
  readonly IMPORT_QUEUE_WAIT_MS: number;
  readonly IMPORT_MEMORY_MB: number;
  readonly BOM_MAX_REFDES: number;
  readonly TRASH_RETENTION_DAYS: number;
  readonly UPLOADS_PER_MINUTE: number;
  readonly COMMENTS_PER_MINUTE: number;
  readonly LOCK_REQUESTS_PER_MINUTE: number;
  readonly DUE_SOON_HOURS: number;
  readonly DUE_SCAN_MS: number;
  readonly TRANSLATION_CONCURRENCY: number;
  readonly TRANSLATION_TIMEOUT_MS: number;
  readonly TRANSLATION_MAX_MB: number;
  readonly TRANSLATION_MEMORY_MB: number;
  readonly TRANSLATION_QUEUE_PER_USER: number;
  readonly TRANSLATION_LEASE_MS: number;
  /** `kid:secret` pairs, comma separated; the first signs URLs, all verify. */
  readonly SIGNED_URL_KEYS?: string;
}

const positive = (desc: string, value: number) => positiveInt({ default: value, desc });
const ms = (desc: string, value: number) => durationMs({ default: value, desc });
/** Hours and days: up to ten years (later date arithmetic stays within a Date). */
const hours = (desc: string, value: number) =>
  integer({ min: 1, max: 10 * 365 * 24 }, { default: value, desc });
const days = (desc: string, value: number) => integer({ min: 1, max: 10 * 365 }, { default: value, desc });

export function collabConfigSpecs() {
  return {
    ...baseConfigSpecs(4000),
    AUTH_JWKS_URL: httpUrl({
      default: 'http://127.0.0.1:3000/.well-known/jwks.json',
      desc: "The API host's JWKS (access-token keys)",
    }),
    AUTH_REVOCATIONS_URL: httpUrl({
      default: undefined,
      desc: "The API host's list of ended sessions; default /auth/sessions/revoked beside AUTH_JWKS_URL",
    }),
    AUTH_REVOCATIONS_REFRESH_MS: ms('How often the full list of ended sessions is re-read', 30_000),
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: positive(
      'Requests per minute and address to protected routes that end in 401 (more answer 429)',
      60,
    ),
    AUTH_ISSUER: str({ default: 'hwp-api', desc: 'Expected iss of access tokens' }),
    AUTH_AUDIENCE: str({ default: 'authenticated', desc: 'Expected aud of access tokens' }),
    SESSION_SECRET: str({ default: undefined, desc: 'Signs the session cookie (32+ characters)' }),
    SESSION_TTL_HOURS: hours('Session cookie lifetime (rolling)', 24 * 7),
    COOKIE_SECURE: flag({
      default: undefined,
      desc: 'Secure flag of the session cookie (default: production)',
    }),
    REQUIRES_INVITATION: flag({ default: false, desc: 'Joining needs an invitation (GET /api/auth/config)' }),
    BRANCH_SUFFIX_WRITES: flag({ default: true, desc: 'Branch writes use a filename suffix (phase 1)' }),
    INVITATION_TTL_DAYS: days('Invitation lifetime', 7),
    INVITATIONS_PER_MINUTE_PER_IP: positive('Invitation sends per minute per IP', 5),
    SITE_URL: httpUrl({ default: undefined, desc: 'Browser app URL used in invitation links' }),
    SSE_HEARTBEAT_MS: ms('Event-stream heartbeat (a stream is silent at most 7/8 of it)', 15_000),
    SSE_RETRY_MS: ms('retry: hint sent to event-stream clients', 3000),
    SSE_MAX_CONNECTIONS_PER_USER: positive('Open event streams per user per process', 10),
    EVENT_LOG_RETENTION_HOURS: hours('How long events stay replayable', 24),
    IMPORT_MAX_MB: positive('Largest CSV/XLSX import file', 50),
    IMPORT_MAX_ROWS: positive('Most data rows of one import', 200_000),
    IMPORT_TIMEOUT_MS: ms(
      'Limit of parsing one import file (time the parser waits for the writes is not counted)',
      60_000,
    ),
    IMPORT_CONCURRENCY: positive('Imports one process runs at once (more wait, then answer 503)', 2),
    IMPORT_QUEUE_WAIT_MS: ms('How long an import waits for a free slot before 503', 15_000),
    IMPORT_MEMORY_MB: positive(
      'Heap limit of the worker thread parsing one import file (MB; past it: 413)',
      1024,
    ),
    BOM_MAX_REFDES: positive(
      'Reference designators one BOM import file or one change of BOM lines holds in all, counted before expanding (more: 400)',
      100_000,
    ),
    TRASH_RETENTION_DAYS: days('How long deleted files stay in the trash', 30),
    UPLOADS_PER_MINUTE: positive('Uploads per minute per workspace and client address', 30),
    COMMENTS_PER_MINUTE: positive('Comments per minute per workspace and client address', 120),
    LOCK_REQUESTS_PER_MINUTE: positive('Lock requests per minute per workspace and client address', 60),
    DUE_SOON_HOURS: hours('Reviews and tasks due within this many hours get a due-soon notice (once)', 24),
    DUE_SCAN_MS: ms('How often one replica scans for reviews and tasks coming due', 300_000),
    TRANSLATION_CONCURRENCY: positive('Model translations one process runs at once (the queue prefetch)', 1),
    TRANSLATION_TIMEOUT_MS: ms('Wall-clock limit of one model translation (past it: failed)', 300_000),
    TRANSLATION_MAX_MB: positive('Largest file the viewer translates (larger: 413)', 512),
    TRANSLATION_MEMORY_MB: positive('Heap limit of a translation worker thread (MB)', 4096),
    TRANSLATION_QUEUE_PER_USER: positive("A user's translations pending or running at once (more: 429)", 4),
    TRANSLATION_LEASE_MS: ms(
      'Lease of a running translation, renewed while it runs; a job whose process died is taken over once it runs out',
      30_000,
    ),
    SIGNED_URL_KEYS: str({
      default: undefined,
      desc: 'kid:secret pairs (comma separated) signing /v1/serve-signed URLs; the first signs. Unset: one key derived from the session secret',
    }),
  };
}

/** The session secret is configured in production (replicas must agree on it) and long enough. */
const sessionSecret: ConfigCheck = (c) => {
  if (c.NODE_ENV === 'production' && !c.SESSION_SECRET)
    return { SESSION_SECRET: 'is required in production' };
  if (typeof c.SESSION_SECRET === 'string' && c.SESSION_SECRET.length < 32) {
    return { SESSION_SECRET: 'must be at least 32 characters' };
  }
  return {};
};

/** Signing keys: `kid:secret` pairs with secrets of 32+ characters (unset: derived from SESSION_SECRET). */
const signedUrlKeys: ConfigCheck = (c) => {
  const value = c.SIGNED_URL_KEYS;
  if (typeof value !== 'string') return {};
  const pairs = value.split(',').map((pair) => pair.trim().split(':'));
  if (pairs.some((p) => p.length !== 2 || !/^[\w.-]{1,32}$/.test(p[0]) || p[1].length < 32))
    return { SIGNED_URL_KEYS: 'must be kid:secret pairs, comma separated, each secret 32+ characters' };
  return {};
};

/**
 * An applying import holds one pooled connection for its transaction and reads and reports on
 * others: with as many imports as connections, they would wait on each other for ever.
 */
const importsBelowPool: ConfigCheck = (c) =>
  typeof c.IMPORT_CONCURRENCY === 'number' &&
  typeof c.DB_POOL_SIZE === 'number' &&
  c.IMPORT_CONCURRENCY >= c.DB_POOL_SIZE
    ? { IMPORT_CONCURRENCY: `must be below DB_POOL_SIZE (${c.DB_POOL_SIZE}): each import holds a connection` }
    : {};

/** Reads and validates the collab-service environment; the only reader of process.env in this service. */
export function loadCollabConfig(env: NodeJS.ProcessEnv): CollabConfig {
  return loadConfig(env, collabConfigSpecs(), [sessionSecret, signedUrlKeys, importsBelowPool], {
    ownPublicUrl: 'PUBLIC_COLLAB_URL',
  }) as CollabConfig;
}
