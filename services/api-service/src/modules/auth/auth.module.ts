import { join, resolve } from 'node:path';
import {
  type ApiRouter,
  AppError,
  clientKey,
  createFailureLimiter,
  createRateLimiter,
  createUnauthenticatedLimiter,
  ownPublicUrl,
  type PlatformDeps,
  persistentSecret,
} from '@hwp/platform';
import type { Express, Request, RequestHandler } from 'express';
import type { ApiConfig } from '../../config';
import { mountAuthRoutes } from './auth.routes';
import { AuthService, type Notify } from './auth.service';
import { type CookieSettings, createAuthenticator } from './authenticate';
import { CodesService } from './codes.service';
import { mountGoTrueRoutes } from './gotrue/gotrue.routes';
import { PasswordHasher } from './passwords';
import { mountRevocationRoutes } from './revocations.routes';
import { type PersonalTenants, SessionsService } from './sessions.service';
import { loadSigningKeys, type SigningKeys } from './signing-keys';
import { AccessTokenSigner } from './tokens';

function origin(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export interface AuthModule {
  auth: AuthService;
  sessions: SessionsService;
  hasher: PasswordHasher;
  keys: SigningKeys;
  /** The service's HMAC secret (AUTH_SECRET or the persisted one); derive purpose keys from it. */
  secret: string;
  /** passport-jwt: 401 without a valid token of a live session; CSRF check for cookie requests. */
  authenticate: RequestHandler;
  /** Standard per-client limit (60 per window). */
  standardLimit: RequestHandler;
  /** For the AI image routes (10 per window per user). */
  aiLimit: RequestHandler;
  /** Where the browser app lives (`SITE_URL`, else this host's public base): links in emails. */
  siteUrl: string;
  mount(api: ApiRouter, app: Express): void;
}

/** Identity of the API host: keys, passwords, sessions, codes, the passport authenticator and rate limits. */
export function createAuthModule(
  deps: PlatformDeps<ApiConfig>,
  tenants: PersonalTenants,
  notify: Notify,
): AuthModule {
  const { config, dataSource, bus, logger } = deps;
  const serviceDir = resolve(config.DATA_DIR, deps.service);
  const secret = config.AUTH_SECRET ?? persistentSecret(serviceDir, 'auth-secret.key');
  const keys = loadSigningKeys({
    privateKeyPem: config.JWT_PRIVATE_KEY,
    keyId: config.JWT_KEY_ID,
    previousPublicKeysPem: config.JWT_PREVIOUS_PUBLIC_KEYS,
    generatedKeyPath: join(serviceDir, 'jwt-signing-key.pem'),
  });
  const signer = new AccessTokenSigner(keys, {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    expiresInSeconds: config.JWT_EXPIRY_SECONDS,
  });
  const hasher = new PasswordHasher({
    memoryKiB: config.PASSWORD_HASH_MEMORY_KIB,
    iterations: config.PASSWORD_HASH_ITERATIONS,
  });
  void hasher.warmUp();
  const codes = new CodesService({
    secret,
    ttlSeconds: config.OTP_TTL_SECONDS,
    maxAttempts: config.OTP_MAX_ATTEMPTS,
    resendIntervalSeconds: config.OTP_RESEND_INTERVAL_SECONDS,
  });
  const sessions = new SessionsService(bus, dataSource, signer, tenants, {
    secret,
    tokenTtlSeconds: config.JWT_EXPIRY_SECONDS,
    reuseIntervalSeconds: config.REFRESH_TOKEN_REUSE_INTERVAL_SECONDS,
    checkCacheMs: config.SESSION_CHECK_CACHE_MS,
  });

  // PUBLIC_API_URL (behind the gateway: the gateway), so emailed links work wherever they are opened.
  const publicBase = ownPublicUrl(config);
  const siteUrl = config.SITE_URL ?? publicBase;
  const allowedOrigins = new Set(
    [siteUrl, publicBase, ...config.AUTH_REDIRECT_ALLOW_LIST.split(',')]
      .map((u) => u.trim())
      .filter(Boolean)
      .map(origin)
      .filter((o): o is string => o !== null),
  );
  const auth = new AuthService(dataSource, bus, hasher, sessions, codes, notify, {
    audience: config.JWT_AUDIENCE,
    requireConfirmation: config.AUTH_REQUIRE_CONFIRMATION,
    otpTtlMinutes: Math.round(config.OTP_TTL_SECONDS / 60),
    verifyLink: (type, token, redirectTo) =>
      `${publicBase}/auth/verify?${new URLSearchParams({ type, token, redirect_to: redirectTo })}`,
    // Only allowed origins: anything else would make the link an open redirect.
    redirectTarget: (requested) => {
      const requestedOrigin = requested ? origin(requested) : null;
      return requested && requestedOrigin && allowedOrigins.has(requestedOrigin) ? requested : siteUrl;
    },
  });
  const cookies: CookieSettings = {
    secure: config.COOKIE_SECURE ?? config.NODE_ENV === 'production',
    domain: config.COOKIE_DOMAIN,
    secret,
  };
  const { authenticate: verifyToken } = createAuthenticator(sessions, {
    keys,
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    csrfSecret: secret,
  });

  const limiterDeps = { dataSource, logger };
  const unauthenticatedLimit = createUnauthenticatedLimiter(limiterDeps, {
    limit: config.RATE_LIMIT_STANDARD_PER_WINDOW,
    windowMs: config.RATE_LIMIT_WINDOW_MS,
  });
  // A request with a valid token goes on without touching the failure counter (no database round
  // trip). One without is answered by the limiter: 429 once its address is over the limit, else
  // its 401, which counts against the address.
  const authenticate: RequestHandler = (req, res, next) =>
    verifyToken(req, res, (error?: unknown) => {
      if (!(error instanceof AppError && error.status === 401)) return next(error);
      unauthenticatedLimit(req, res, (limited?: unknown) => next(limited ?? error));
    });
  const failureWindowMs = config.LOGIN_FAILURE_WINDOW_MINUTES * 60_000;
  const standardLimit = createRateLimiter(limiterDeps, {
    name: 'standard',
    limit: config.RATE_LIMIT_STANDARD_PER_WINDOW,
    windowMs: config.RATE_LIMIT_WINDOW_MS,
    key: clientKey,
  });
  // The same counters as standardLimit; refuses while they cannot be read (sign-in, sign-up, codes).
  const credentialLimit = createRateLimiter(limiterDeps, {
    name: 'standard',
    limit: config.RATE_LIMIT_STANDARD_PER_WINDOW,
    windowMs: config.RATE_LIMIT_WINDOW_MS,
    key: clientKey,
    failClosed: true,
  });
  const aiLimit = createRateLimiter(limiterDeps, {
    name: 'ai',
    limit: config.RATE_LIMIT_AI_PER_WINDOW,
    windowMs: config.RATE_LIMIT_WINDOW_MS,
    key: clientKey,
  });
  const accountOf = (req: Request) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const id = body.email ?? body.phone_number ?? body.phone ?? '';
    return `account:${String(id).trim().toLowerCase()}`;
  };
  const loginLimits = [
    createFailureLimiter(limiterDeps, {
      name: 'login-ip',
      limit: config.LOGIN_MAX_FAILURES_PER_IP,
      windowMs: failureWindowMs,
      key: clientKey,
      message: 'Too many failed logins from this address; try again later',
      failClosed: true,
    }),
    // Keyed on account and address: a guesser is stopped after a few tries, but cannot lock the
    // owner out from elsewhere (DECISIONS.md section 1); the account-wide ceiling is far higher.
    // One attempt at a time per key: a burst of simultaneous guesses cannot all read the same count.
    createFailureLimiter(limiterDeps, {
      name: 'login-account',
      limit: config.LOGIN_MAX_FAILURES_PER_ACCOUNT,
      windowMs: failureWindowMs,
      key: (req) => `${accountOf(req)}|${clientKey(req)}`,
      message: 'Too many failed logins for this account from this address; try again later',
      failClosed: true,
      oneAtATime: true,
    }),
    createFailureLimiter(limiterDeps, {
      name: 'login-account-total',
      limit: config.LOGIN_MAX_FAILURES_PER_ACCOUNT_TOTAL,
      windowMs: failureWindowMs,
      key: accountOf,
      message: 'Too many failed logins for this account; try again later',
      failClosed: true,
    }),
  ];

  return {
    auth,
    sessions,
    hasher,
    keys,
    secret,
    authenticate,
    standardLimit,
    aiLimit,
    siteUrl: siteUrl.replace(/\/+$/, ''),
    mount(api, app) {
      const routeDeps = {
        auth,
        sessions,
        keys,
        cookies,
        authenticate,
        standardLimit,
        credentialLimit,
        loginLimits,
        siteUrl,
      };
      mountAuthRoutes(api, routeDeps);
      mountRevocationRoutes(api, dataSource, sessions.revocations, standardLimit);
      mountGoTrueRoutes(api, app, routeDeps);
    },
  };
}
