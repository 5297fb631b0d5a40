import { type BaseConfig, baseConfigSpecs, ConfigError, loadConfig } from '@hwp/platform';
import { bool, num, str, url } from 'envalid';

/** Validated configuration of the api-service (README lists every variable). */
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
}

const positive = (desc: string, value: number) => num({ default: value, desc });

export function apiConfigSpecs() {
  return {
    ...baseConfigSpecs(3000),
    JWT_PRIVATE_KEY: str({ default: undefined, desc: 'PEM private key (RSA or P-256) of the token signer' }),
    JWT_KEY_ID: str({ default: undefined, desc: 'kid of the signing key (default: its thumbprint)' }),
    JWT_PREVIOUS_PUBLIC_KEYS: str({ default: undefined, desc: 'PEM public keys still accepted' }),
    JWT_ISSUER: str({ default: 'hwp-api', desc: 'iss of access tokens' }),
    JWT_AUDIENCE: str({ default: 'authenticated', desc: 'aud of access tokens' }),
    JWT_EXPIRY_SECONDS: positive('Access-token lifetime', 3600),
    AUTH_SECRET: str({ default: undefined, desc: 'HMAC secret of refresh-token rotation' }),
    REFRESH_TOKEN_REUSE_INTERVAL_SECONDS: positive('Grace window of a just-rotated refresh token', 10),
    SESSION_CHECK_CACHE_MS: positive('How long a live-session check is cached (revocation delay)', 2000),
    PASSWORD_HASH_MEMORY_KIB: positive('argon2id memory cost', 19456),
    PASSWORD_HASH_ITERATIONS: positive('argon2id time cost', 2),
    AUTH_REQUIRE_CONFIRMATION: bool({ default: true, desc: 'Signup must confirm email/phone first' }),
    OTP_TTL_SECONDS: positive('Lifetime of one-time codes', 600),
    OTP_MAX_ATTEMPTS: positive('Wrong tries before a code is void', 5),
    OTP_RESEND_INTERVAL_SECONDS: positive('Minimum gap between two codes to one address', 60),
    SITE_URL: url({ default: undefined, desc: 'Where the browser app lives (default redirect)' }),
    AUTH_REDIRECT_ALLOW_LIST: str({ default: '', desc: 'Extra allowed redirect_to origins, comma list' }),
    COOKIE_SECURE: bool({ default: undefined, desc: 'Secure flag of session cookies (default: production)' }),
    COOKIE_DOMAIN: str({ default: undefined, desc: 'Domain of session cookies' }),
    RATE_LIMIT_WINDOW_MS: positive('Window of the standard and AI rate limits', 60_000),
    RATE_LIMIT_STANDARD_PER_WINDOW: positive('Requests per window, standard routes', 60),
    RATE_LIMIT_AI_PER_WINDOW: positive('Requests per window, AI routes', 10),
    LOGIN_MAX_FAILURES_PER_ACCOUNT: positive('Failed logins per account and client address per window', 5),
    LOGIN_MAX_FAILURES_PER_ACCOUNT_TOTAL: positive(
      'Failed logins per account from all addresses per window',
      100,
    ),
    LOGIN_MAX_FAILURES_PER_IP: positive('Failed logins per IP per window', 50),
    LOGIN_FAILURE_WINDOW_MINUTES: positive('Window of the login failure limits', 15),
    SMTP_URL: url({ default: undefined, desc: 'smtp(s)://user:pass@host:port; absent = dev mailbox' }),
    SMTP_FROM: str({ default: 'Hardware Platform <no-reply@localhost>', desc: 'From of emails' }),
    TWILIO_ACCOUNT_SID: str({ default: undefined, desc: 'SMS through Twilio when set' }),
    TWILIO_AUTH_TOKEN: str({ default: undefined }),
    TWILIO_FROM: str({ default: undefined, desc: 'Sender number or messaging service' }),
    TWILIO_API_URL: url({ default: 'https://api.twilio.com', desc: 'Twilio API base URL' }),
  };
}

/** Reads and validates the api-service environment; the only reader of process.env in this service. */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  const config = loadConfig(env, apiConfigSpecs()) as ApiConfig;
  const problems: Record<string, string> = {};
  if (config.NODE_ENV === 'production') {
    // Generated keys live in one container's data folder: replicas would not agree on them.
    if (!config.JWT_PRIVATE_KEY) problems.JWT_PRIVATE_KEY = 'required in production';
    if (!config.AUTH_SECRET) problems.AUTH_SECRET = 'required in production';
  }
  if (config.AUTH_SECRET !== undefined && config.AUTH_SECRET.length < 32) {
    problems.AUTH_SECRET = 'must be at least 32 characters';
  }
  const twilio = [config.TWILIO_ACCOUNT_SID, config.TWILIO_AUTH_TOKEN, config.TWILIO_FROM];
  if (twilio.some((v) => v !== undefined) && twilio.some((v) => v === undefined)) {
    problems.TWILIO_ACCOUNT_SID = 'TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM go together';
  }
  if (Object.keys(problems).length > 0) throw new ConfigError(problems);
  return config;
}
