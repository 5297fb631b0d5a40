import { createHash } from 'node:crypto';
import type { AccessTokenClaims } from '@hwp/contracts';
import {
  AppError,
  CSRF_HEADER,
  checkCsrfToken,
  csrfToken,
  currentContext,
  ExpiringMap,
  UnauthorizedError,
} from '@hwp/platform';
import { parse as parseCookie } from 'cookie';
import type { CookieOptions, NextFunction, Request, RequestHandler, Response } from 'express';
import jwt from 'jsonwebtoken';
import { Passport } from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { SessionsService } from './sessions.service';
import type { SigningKeys } from './signing-keys';

/** Who a request is authenticated as (set on `req.user`). */
export interface Principal {
  id: string;
  sessionId: string;
  email: string;
  phone: string;
  /** Cookie-authenticated requests that change state must pass the CSRF check. */
  via: 'bearer' | 'cookie';
}

declare global {
  namespace Express {
    interface User extends Principal {}
    interface Request {
      /** How the access token came: Authorization header or the access cookie. */
      authVia?: 'bearer' | 'cookie';
    }
  }
}

/** Cookie names of the browser flow (`?cookie=true` on the login routes). */
export const COOKIES = {
  access: 'hwp-access-token',
  refresh: 'hwp-refresh-token',
  csrf: 'hwp-csrf-token',
} as const;
export { CSRF_HEADER };

const REFRESH_COOKIE_PATH = '/auth';
const REFRESH_COOKIE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface CookieSettings {
  secure: boolean;
  domain?: string;
  secret: string;
}

/** Signed double-submit: the header must equal HMAC(secret, session id), the value of the CSRF cookie. */
export function checkCsrf(req: Request, sessionId: string, secret: string): void {
  checkCsrfToken(req, sessionId, secret, COOKIES.csrf);
}

export function setSessionCookies(
  res: Response,
  settings: CookieSettings,
  session: { sessionId: string; accessToken: string; refreshToken: string; expiresIn: number },
): void {
  const base: CookieOptions = { secure: settings.secure, sameSite: 'lax', domain: settings.domain };
  res.cookie(COOKIES.access, session.accessToken, {
    ...base,
    httpOnly: true,
    path: '/',
    maxAge: session.expiresIn * 1000,
  });
  res.cookie(COOKIES.refresh, session.refreshToken, {
    ...base,
    httpOnly: true,
    path: REFRESH_COOKIE_PATH,
    maxAge: REFRESH_COOKIE_MAX_AGE_MS,
  });
  // Readable by the page's script, which echoes it in the CSRF header.
  res.cookie(COOKIES.csrf, csrfToken(settings.secret, session.sessionId), {
    ...base,
    httpOnly: false,
    path: '/',
    maxAge: REFRESH_COOKIE_MAX_AGE_MS,
  });
}

export function clearSessionCookies(res: Response, settings: CookieSettings): void {
  const base: CookieOptions = { secure: settings.secure, sameSite: 'lax', domain: settings.domain };
  res.clearCookie(COOKIES.access, { ...base, httpOnly: true, path: '/' });
  res.clearCookie(COOKIES.refresh, { ...base, httpOnly: true, path: REFRESH_COOKIE_PATH });
  res.clearCookie(COOKIES.csrf, { ...base, path: '/' });
}

const fromBearer = ExtractJwt.fromAuthHeaderAsBearerToken();
/** Verified access tokens remembered per process. */
const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * The request's cookies, parsed on first use and kept on `req.cookies` (most requests carry a bearer
 * token and never need them, so no middleware parses them up front).
 */
export function requestCookies(req: Request): Record<string, string | undefined> {
  req.cookies ??= req.headers.cookie ? parseCookie(req.headers.cookie) : {};
  return req.cookies;
}

/** Bearer header first; the access cookie only when no header is sent. */
function extractToken(req: Request): string | null {
  const bearer = fromBearer(req);
  if (bearer) return bearer;
  const cookie = requestCookies(req)[COOKIES.access];
  if (cookie) {
    req.authVia = 'cookie';
    return cookie;
  }
  return null;
}

export interface AuthenticatorSettings {
  keys: SigningKeys;
  issuer: string;
  audience: string;
  csrfSecret: string;
}

/**
 * passport-jwt with a pinned algorithm list, `iss` and `aud` checked, the key chosen by `kid`
 * among the configured ones (no `alg: none`, no HMAC confusion), then the session checked alive.
 * `authenticate()` answers 401 in the error body; a cookie-authenticated unsafe request must also
 * pass the CSRF check (403).
 */
export function createAuthenticator(
  sessions: SessionsService,
  settings: AuthenticatorSettings,
): { authenticate: RequestHandler } {
  const passport = new Passport();
  // Claims of verified tokens by the token's sha256, until the token expires (bounded, oldest out
  // first): a token's signature is checked once. Its session is still checked on every request.
  const verified = new ExpiringMap<string, AccessTokenClaims>(VERIFIED_TOKENS_KEPT);
  const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');
  const remember = (token: string, claims: AccessTokenClaims) =>
    verified.set(hashOf(token), claims, claims.exp * 1000);
  const recalled = (token: string): AccessTokenClaims | undefined => verified.get(hashOf(token));
  const algorithms = [...new Set([...settings.keys.verification.values()].map((k) => k.alg))];
  passport.use(
    new JwtStrategy(
      {
        jwtFromRequest: extractToken,
        secretOrKeyProvider: (_req, rawJwt, done) => {
          const decoded = jwt.decode(rawJwt as string, { complete: true });
          const kid = decoded?.header.kid;
          const key = kid ? settings.keys.verification.get(kid) : undefined;
          if (!key) return done(new Error('unknown signing key'));
          if (decoded?.header.alg !== key.alg) return done(new Error('algorithm does not match the key'));
          done(null, key.key as unknown as string);
        },
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: algorithms as jwt.Algorithm[],
        passReqToCallback: true,
      },
      (req: Request, claims: AccessTokenClaims, done: (error: unknown, user?: Principal | false) => void) => {
        // jsonwebtoken accepts a token without exp: one that never expires is refused here.
        if (!claims.sub || !claims.session_id || typeof claims.exp !== 'number') return done(null, false);
        const raw = extractToken(req);
        if (raw) remember(raw, claims);
        sessions.isAlive(claims.session_id, claims.sub).then(
          (alive) =>
            done(
              null,
              alive
                ? {
                    id: claims.sub,
                    sessionId: claims.session_id,
                    email: claims.email ?? '',
                    phone: claims.phone ?? '',
                    via: req.authVia ?? 'bearer',
                  }
                : false,
            ),
          (error: unknown) => done(error),
        );
      },
    ),
  );

  /** A request whose token was verified before: only the session is checked (its own short cache). */
  const fromCache = (req: Request, res: Response, next: NextFunction, claims: AccessTokenClaims) => {
    sessions.isAlive(claims.session_id, claims.sub).then((alive) => {
      if (!alive) return next(new UnauthorizedError('Invalid access token, or its session has ended'));
      const user: Principal = {
        id: claims.sub,
        sessionId: claims.session_id,
        email: claims.email ?? '',
        phone: claims.phone ?? '',
        via: req.authVia ?? 'bearer',
      };
      accept(req, res, next, user);
    }, next);
  };

  const accept = (req: Request, _res: Response, next: NextFunction, user: Principal) => {
    try {
      if (user.via === 'cookie') checkCsrf(req, user.sessionId, settings.csrfSecret);
    } catch (csrfError) {
      return next(csrfError);
    }
    req.user = user;
    const context = currentContext();
    if (context) context.userId = user.id;
    next();
  };

  const authenticate: RequestHandler = (req, res, next) => {
    const raw = extractToken(req);
    const known = raw ? recalled(raw) : undefined;
    if (known) return fromCache(req, res, next, known);
    passport.authenticate(
      'jwt',
      { session: false },
      (error: unknown, user: Principal | false, info: unknown) => {
        if (error) return next(error);
        if (!user) {
          if (info instanceof jwt.TokenExpiredError) {
            return next(new AppError('token_expired', 'The access token has expired; refresh it'));
          }
          const missing = info instanceof Error && info.message === 'No auth token';
          return next(
            new UnauthorizedError(
              missing
                ? 'Authentication required: send Authorization: Bearer <access token>'
                : 'Invalid access token, or its session has ended',
            ),
          );
        }
        accept(req, res, next, user);
      },
    )(req, res, next);
  };

  return { authenticate };
}
