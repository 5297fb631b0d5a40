import { type BaseConfig, baseConfigSpecs, ConfigError, loadConfig } from '@hwp/platform';
import { bool, num, str, url } from 'envalid';

/** Validated configuration of the collab-service (README lists every variable). */
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
}

const positive = (desc: string, value: number) => num({ default: value, desc });

export function collabConfigSpecs() {
  return {
    ...baseConfigSpecs(4000),
    AUTH_JWKS_URL: url({
      default: 'http://127.0.0.1:3000/.well-known/jwks.json',
      desc: "The API host's JWKS (access-token keys)",
    }),
    AUTH_REVOCATIONS_URL: url({
      default: undefined,
      desc: "The API host's list of ended sessions; default /auth/sessions/revoked beside AUTH_JWKS_URL",
    }),
    AUTH_REVOCATIONS_REFRESH_MS: positive('How often the full list of ended sessions is re-read', 30_000),
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: positive(
      'Requests per minute and address to protected routes that end in 401 (more answer 429)',
      60,
    ),
    AUTH_ISSUER: str({ default: 'hwp-api', desc: 'Expected iss of access tokens' }),
    AUTH_AUDIENCE: str({ default: 'authenticated', desc: 'Expected aud of access tokens' }),
    SESSION_SECRET: str({ default: undefined, desc: 'Signs the session cookie (32+ characters)' }),
    SESSION_TTL_HOURS: positive('Session cookie lifetime (rolling)', 24 * 7),
    COOKIE_SECURE: bool({
      default: undefined,
      desc: 'Secure flag of the session cookie (default: production)',
    }),
    REQUIRES_INVITATION: bool({ default: false, desc: 'Joining needs an invitation (GET /api/auth/config)' }),
    BRANCH_SUFFIX_WRITES: bool({ default: true, desc: 'Branch writes use a filename suffix (phase 1)' }),
    INVITATION_TTL_DAYS: positive('Invitation lifetime', 7),
    INVITATIONS_PER_MINUTE_PER_IP: positive('Invitation sends per minute per IP', 5),
    SITE_URL: url({ default: undefined, desc: 'Browser app URL used in invitation links' }),
    SSE_HEARTBEAT_MS: positive('Heartbeat comment interval of the event stream', 15_000),
    SSE_RETRY_MS: positive('retry: hint sent to event-stream clients', 3000),
    SSE_MAX_CONNECTIONS_PER_USER: positive('Open event streams per user per process', 10),
    EVENT_LOG_RETENTION_HOURS: positive('How long events stay replayable', 24),
    IMPORT_MAX_MB: positive('Largest CSV/XLSX import file', 50),
    IMPORT_MAX_ROWS: positive('Most data rows of one import', 200_000),
    IMPORT_TIMEOUT_MS: positive('Wall-clock limit of parsing one import file', 60_000),
    IMPORT_CONCURRENCY: positive('Imports one process runs at once (more wait, then answer 503)', 2),
    IMPORT_QUEUE_WAIT_MS: positive('How long an import waits for a free slot before 503', 15_000),
  };
}

/** Reads and validates the collab-service environment; the only reader of process.env in this service. */
export function loadCollabConfig(env: NodeJS.ProcessEnv): CollabConfig {
  const config = loadConfig(env, collabConfigSpecs()) as CollabConfig;
  const problems: Record<string, string> = {};
  if (config.NODE_ENV === 'production' && !config.SESSION_SECRET) {
    problems.SESSION_SECRET = 'required in production';
  }
  if (config.SESSION_SECRET !== undefined && config.SESSION_SECRET.length < 32) {
    problems.SESSION_SECRET = 'must be at least 32 characters';
  }
  if (Object.keys(problems).length > 0) throw new ConfigError(problems);
  return config;
}
