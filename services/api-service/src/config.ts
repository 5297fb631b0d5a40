import type { KeyObject } from 'node:crypto';
import type { BaseConfig } from '@hwp/platform';
import {
  baseConfigSpecs,
  type ConfigCheck,
  cidrList,
  durationMs,
  flag,
  httpUrl,
  integer,
  loadConfig,
  pemPrivateKey,
  pemPublicKeys,
  portNumber,
  positiveInt,
  urlOf,
} from '@hwp/platform/config';
import { str } from 'envalid';

/** Validated configuration of the api-service (docs/configuration.md lists every variable). */
export interface ApiConfig extends BaseConfig {
  /** PEM private key (RSA -> RS256, P-256 -> ES256) of the access-token signer; generated in DATA_DIR when unset outside production. */
  readonly JWT_PRIVATE_KEY?: string;
  /** `kid` of the signing key; default its RFC 7638 thumbprint. */
  readonly JWT_KEY_ID?: string;
  /** PEM public keys still accepted (key rotation), separated by blank lines. */
  readonly JWT_PREVIOUS_PUBLIC_KEYS?: string;
  readonly JWT_ISSUER: string;
  readonly JWT_AUDIENCE: string;
  readonly JWT_EXPIRY_SECONDS: number;
  /** HMAC secret of refresh-token rotation; generated in DATA_DIR when unset outside production. */
  readonly AUTH_SECRET?: string;
  readonly REFRESH_TOKEN_REUSE_INTERVAL_SECONDS: number;
  readonly SESSION_CHECK_CACHE_MS: number;
  readonly PASSWORD_HASH_MEMORY_KIB: number;
  readonly PASSWORD_HASH_ITERATIONS: number;
  readonly AUTH_REQUIRE_CONFIRMATION: boolean;
  readonly OTP_TTL_SECONDS: number;
  readonly OTP_MAX_ATTEMPTS: number;
  readonly OTP_RESEND_INTERVAL_SECONDS: number;
  readonly SITE_URL?: string;
  readonly TENANT_INVITATION_TTL_HOURS: number;
  readonly AUTH_REDIRECT_ALLOW_LIST: string;
  readonly COOKIE_SECURE?: boolean;
  readonly COOKIE_DOMAIN?: string;
  readonly RATE_LIMIT_WINDOW_MS: number;
  readonly RATE_LIMIT_STANDARD_PER_WINDOW: number;
  readonly RATE_LIMIT_AI_PER_WINDOW: number;
  readonly LOGIN_MAX_FAILURES_PER_ACCOUNT: number;
  readonly LOGIN_MAX_FAILURES_PER_ACCOUNT_TOTAL: number;
  readonly LOGIN_MAX_FAILURES_PER_IP: number;
  readonly LOGIN_FAILURE_WINDOW_MINUTES: number;
  readonly SMTP_URL?: string;
  readonly SMTP_FROM: string;
  readonly TWILIO_ACCOUNT_SID?: string;
  readonly TWILIO_AUTH_TOKEN?: string;
  readonly TWILIO_FROM?: string;
  readonly TWILIO_API_URL: string;
  /** clamd for the virus scan stage; unset = the built-in checks only. Set but unreachable = fail closed. */
  readonly CLAMD_HOST?: string;
  readonly CLAMD_PORT: number;
  /** Files larger than this get no content analysis (metadata, previews, text index). */
  readonly PROCESSING_MAX_MB: number;
  readonly PROCESSING_CONCURRENCY: number;
  readonly PROCESSING_WINDOW: number;
  readonly PROCESSING_STUCK_AFTER_MS: number;
  readonly PROCESSING_SWEEP_MS: number;
  readonly PROCESSING_MAX_REQUEUES: number;
  readonly WS_PING_INTERVAL_MS: number;
  readonly IMAGE_FETCH_TIMEOUT_MS: number;
  /** Image providers (section 4.2); a route whose provider is unset answers 503 naming these. */
  readonly IMAGE_PROVIDER_A_URL?: string;
  readonly IMAGE_PROVIDER_A_KEY?: string;
  readonly IMAGE_PROVIDER_A_MODEL: string;
  readonly IMAGE_PROVIDER_B_URL?: string;
  readonly IMAGE_PROVIDER_B_KEY?: string;
  readonly IMAGE_PROVIDER_B_MODEL: string;
  readonly IMAGE_PREDICTIONS_URL?: string;
  readonly IMAGE_PREDICTIONS_KEY?: string;
  readonly IMAGE_PREDICTIONS_MODEL?: string;
  readonly IMAGE_VISION_URL?: string;
  readonly IMAGE_VISION_KEY?: string;
  readonly IMAGE_VISION_MODEL: string;
  readonly IMAGE_PROVIDER_TIMEOUT_MS: number;
  readonly IMAGE_PREDICTION_POLL_MS: number;
  /** Non-public ranges remote reference images may come from (an operator's internal image hosts). */
  readonly IMAGE_FETCH_ALLOWED_CIDRS: string[];
}

const positive = (desc: string, value: number) => positiveInt({ default: value, desc });
/** Durations in seconds: 1 s to ten years (later date arithmetic stays within a Date). */
const seconds = (desc: string, value: number, min = 1) =>
  integer({ min, max: 10 * 365 * 24 * 3600 }, { default: value, desc });

/** The token signer takes RSA of 2048+ bits (RS256) or EC P-256 (ES256), nothing else. */
function signingAlgorithmProblem(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    return bits >= 2048 ? undefined : `must be an RSA key of at least 2048 bits (got ${bits})`;
  }
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1')
    return undefined;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return `must be an RSA (2048+ bits) or EC P-256 key (got ${key.asymmetricKeyType}${curve ? ` ${curve}` : ''})`;
}

export function apiConfigSpecs() {
  return {
    ...baseConfigSpecs(3000),
    JWT_PRIVATE_KEY: pemPrivateKey(
      { default: undefined, desc: 'PEM private key (RSA or P-256) of the token signer' },
      signingAlgorithmProblem,
    ),
    JWT_KEY_ID: str({ default: undefined, desc: 'kid of the signing key (default: its thumbprint)' }),
    JWT_PREVIOUS_PUBLIC_KEYS: pemPublicKeys(
      { default: undefined, desc: 'PEM public keys still accepted' },
      signingAlgorithmProblem,
    ),
    JWT_ISSUER: str({ default: 'hwp-api', desc: 'iss of access tokens' }),
    JWT_AUDIENCE: str({ default: 'authenticated', desc: 'aud of access tokens' }),
    JWT_EXPIRY_SECONDS: seconds('Access-token lifetime', 3600),
    AUTH_SECRET: str({ default: undefined, desc: 'HMAC secret of refresh-token rotation' }),
    REFRESH_TOKEN_REUSE_INTERVAL_SECONDS: seconds(
      'Grace window of a just-rotated refresh token; 0 = none',
      10,
      0,
    ),
    SESSION_CHECK_CACHE_MS: durationMs(
      { default: 2000, desc: 'How long a live-session check is cached (revocation delay); 0 = not cached' },
      0,
    ),
    // argon2's own bounds: at least 8 KiB per lane (one lane here), 32-bit counts.
    PASSWORD_HASH_MEMORY_KIB: integer(
      { min: 8, max: 4_294_967_295 },
      { default: 19456, desc: 'argon2id memory cost' },
    ),
    PASSWORD_HASH_ITERATIONS: integer(
      { min: 1, max: 4_294_967_295 },
      { default: 2, desc: 'argon2id time cost' },
    ),
    AUTH_REQUIRE_CONFIRMATION: flag({ default: true, desc: 'Signup must confirm email/phone first' }),
    OTP_TTL_SECONDS: seconds('Lifetime of one-time codes', 600),
    OTP_MAX_ATTEMPTS: positive('Wrong tries before a code is void', 5),
    OTP_RESEND_INTERVAL_SECONDS: seconds('Minimum gap between two codes to one address', 60),
    SITE_URL: httpUrl({ default: undefined, desc: 'Where the browser app lives (default redirect)' }),
    TENANT_INVITATION_TTL_HOURS: positive('Hours a tenant invitation can be accepted', 168),
    AUTH_REDIRECT_ALLOW_LIST: str({ default: '', desc: 'Extra allowed redirect_to origins, comma list' }),
    COOKIE_SECURE: flag({ default: undefined, desc: 'Secure flag of session cookies (default: production)' }),
    COOKIE_DOMAIN: str({ default: undefined, desc: 'Domain of session cookies' }),
    RATE_LIMIT_WINDOW_MS: durationMs({ default: 60_000, desc: 'Window of the standard and AI rate limits' }),
    RATE_LIMIT_STANDARD_PER_WINDOW: positive('Requests per window, standard routes', 60),
    RATE_LIMIT_AI_PER_WINDOW: positive('Requests per window, AI routes', 10),
    LOGIN_MAX_FAILURES_PER_ACCOUNT: positive('Failed logins per account and client address per window', 5),
    LOGIN_MAX_FAILURES_PER_ACCOUNT_TOTAL: positive(
      'Failed logins per account from all addresses per window',
      100,
    ),
    LOGIN_MAX_FAILURES_PER_IP: positive('Failed logins per IP per window', 50),
    LOGIN_FAILURE_WINDOW_MINUTES: integer(
      { min: 1, max: 10 * 365 * 24 * 60 },
      { default: 15, desc: 'Window of the login failure limits' },
    ),
    SMTP_URL: urlOf(['smtp:', 'smtps:'], {
      default: undefined,
      desc: 'smtp(s)://user:pass@host:port; absent = dev mailbox',
    }),
    SMTP_FROM: str({ default: 'Hardware Platform <no-reply@localhost>', desc: 'From of emails' }),
    TWILIO_ACCOUNT_SID: str({ default: undefined, desc: 'SMS through Twilio when set' }),
    TWILIO_AUTH_TOKEN: str({
      default: undefined,
      desc: 'Twilio auth token, with TWILIO_ACCOUNT_SID and TWILIO_FROM',
    }),
    TWILIO_FROM: str({ default: undefined, desc: 'Sender number or messaging service' }),
    TWILIO_API_URL: httpUrl({ default: 'https://api.twilio.com', desc: 'Twilio API base URL' }),
    CLAMD_HOST: str({ default: undefined, desc: 'clamd host for virus scans (unset: built-in checks only)' }),
    CLAMD_PORT: portNumber({ default: 3310, desc: 'clamd TCP port' }),
    PROCESSING_MAX_MB: positive('Largest file whose content processing analyses (MB)', 200),
    PROCESSING_CONCURRENCY: positive('Files one process analyses at once (CPU and memory bound)', 2),
    PROCESSING_WINDOW: integer(
      { min: 1, max: 1000 },
      {
        default: 32,
        desc: 'Processing events one process takes from the queue at once (no connection held while they wait), among which files are analysed round-robin by tenant',
      },
    ),
    PROCESSING_STUCK_AFTER_MS: durationMs({
      default: 15 * 60_000,
      desc: 'A file still pending or processing this long after its attempt began is requeued (readyz: degraded)',
    }),
    PROCESSING_SWEEP_MS: durationMs({
      default: 60_000,
      desc: 'How often stalled file processing is looked for',
    }),
    PROCESSING_MAX_REQUEUES: integer(
      { min: 0, max: 100 },
      { default: 2, desc: 'Requeues of stalled processing before the file ends failed' },
    ),
    IMAGE_FETCH_TIMEOUT_MS: durationMs({
      default: 15_000,
      desc: 'Time limit of fetching a remote reference image',
    }),
    IMAGE_PROVIDER_A_URL: httpUrl({
      default: undefined,
      desc: 'Provider A (OpenAI Images API dialect) base URL',
    }),
    IMAGE_PROVIDER_A_KEY: str({ default: undefined, desc: 'Provider A API key' }),
    IMAGE_PROVIDER_A_MODEL: str({ default: 'gpt-image-1', desc: 'Provider A model' }),
    IMAGE_PROVIDER_B_URL: httpUrl({
      default: undefined,
      desc: 'Provider B (Stability REST v2 dialect) base URL',
    }),
    IMAGE_PROVIDER_B_KEY: str({ default: undefined, desc: 'Provider B API key' }),
    IMAGE_PROVIDER_B_MODEL: str({
      default: 'core',
      desc: 'Provider B generation endpoint (core, ultra, sd3)',
    }),
    IMAGE_PREDICTIONS_URL: httpUrl({
      default: undefined,
      desc: 'Predictions (Replicate dialect) base URL, for generative upscaling',
    }),
    IMAGE_PREDICTIONS_KEY: str({ default: undefined, desc: 'Predictions API token' }),
    IMAGE_PREDICTIONS_MODEL: str({ default: undefined, desc: 'Model version id of the upscaler' }),
    IMAGE_VISION_URL: httpUrl({
      default: undefined,
      desc: 'Vision model (OpenAI chat completions dialect) base URL, for image analysis',
    }),
    IMAGE_VISION_KEY: str({ default: undefined, desc: 'Vision API key' }),
    IMAGE_VISION_MODEL: str({ default: 'gpt-4o-mini', desc: 'Vision model' }),
    IMAGE_PROVIDER_TIMEOUT_MS: durationMs({ default: 60_000, desc: 'Time limit of one provider request' }),
    IMAGE_PREDICTION_POLL_MS: durationMs({
      default: 2_000,
      desc: 'Interval of polling a running prediction',
    }),
    IMAGE_FETCH_ALLOWED_CIDRS: cidrList({
      default: [],
      desc: 'Private ranges remote reference images may come from (comma list of CIDRs); public addresses always may',
    }),
    WS_PING_INTERVAL_MS: positive(
      'WebSocket ping interval (ms); a socket without a pong by the next ping is closed, and memberships are checked again',
      30_000,
    ),
  };
}

/** Rules across variables (production needs configured secrets; Twilio settings go together). */
const apiChecks: ConfigCheck = (c) => {
  const problems: Record<string, string> = {};
  if (c.NODE_ENV === 'production') {
    // Generated keys live in one container's data folder: replicas would not agree on them.
    if (!c.JWT_PRIVATE_KEY) problems.JWT_PRIVATE_KEY = 'is required in production';
    if (!c.AUTH_SECRET) problems.AUTH_SECRET = 'is required in production';
  }
  if (typeof c.AUTH_SECRET === 'string' && c.AUTH_SECRET.length < 32) {
    problems.AUTH_SECRET = 'must be at least 32 characters';
  }
  const twilio = [c.TWILIO_ACCOUNT_SID, c.TWILIO_AUTH_TOKEN, c.TWILIO_FROM];
  if (twilio.some((v) => v !== undefined) && twilio.some((v) => v === undefined)) {
    problems.TWILIO_ACCOUNT_SID = 'must be set together with TWILIO_AUTH_TOKEN and TWILIO_FROM';
  }
  // A provider is its URL and key together (the predictions also need the model version).
  for (const [url, key, model] of [
    ['IMAGE_PROVIDER_A_URL', 'IMAGE_PROVIDER_A_KEY'],
    ['IMAGE_PROVIDER_B_URL', 'IMAGE_PROVIDER_B_KEY'],
    ['IMAGE_PREDICTIONS_URL', 'IMAGE_PREDICTIONS_KEY', 'IMAGE_PREDICTIONS_MODEL'],
    ['IMAGE_VISION_URL', 'IMAGE_VISION_KEY'],
  ] as const) {
    const names = model ? [url, key, model] : [url, key];
    const set = names.filter((name) => c[name] !== undefined);
    if (set.length > 0 && set.length < names.length)
      problems[url] = `must be set together with ${names.filter((n) => n !== url).join(' and ')}`;
  }
  return problems;
};

/** Reads and validates the api-service environment; the only reader of process.env in this service. */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  return loadConfig(env, apiConfigSpecs(), [apiChecks], { ownPublicUrl: 'PUBLIC_API_URL' }) as ApiConfig;
}
