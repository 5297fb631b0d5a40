import { resolve } from 'node:path';
import {
  checkCsrfToken,
  checkRequestOrigin,
  corsOrigins,
  csrfToken,
  originOf,
  type PlatformDeps,
  persistentSecret,
} from '@hwp/platform';
import type { Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import type { CollabConfig } from '../../config';
import { PostgresSessionStore } from './session-store';

export const SESSION_COOKIE = 'hwp.sid';
/** Readable cookie with the CSRF token the page echoes in X-CSRF-Token. */
export const CSRF_COOKIE = 'hwp.csrf';

export interface CookieSessions {
  /** express-session on the Postgres store. */
  middleware: RequestHandler;
  /** 403 unless a state-changing request comes from an allowed origin and echoes the CSRF token. */
  csrfGuard: RequestHandler;
  setCsrfCookie(res: Response, sessionId: string): void;
  clear(res: Response): void;
  /** Whether the request carries a session cookie (live or not). */
  sent(req: Request): boolean;
}

/**
 * The browser sessions of the collaboration host: an HttpOnly session cookie (Postgres-backed, shared
 * by replicas) and a readable CSRF cookie, both `__Host-` prefixed when Secure (no Domain, path /, so
 * no sibling subdomain can plant or overwrite them).
 */
export function createCookieSessions(deps: PlatformDeps<CollabConfig>): CookieSessions {
  const { config, dataSource } = deps;
  const ttlMs = config.SESSION_TTL_HOURS * 3_600_000;
  const secret =
    config.SESSION_SECRET ?? persistentSecret(resolve(config.DATA_DIR, deps.service), 'session-secret.key');
  const secure = config.COOKIE_SECURE ?? config.NODE_ENV === 'production';
  const names = {
    session: secure ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE,
    csrf: secure ? `__Host-${CSRF_COOKIE}` : CSRF_COOKIE,
  };
  const allowedOrigins = new Set(
    [...corsOrigins(config), config.SITE_URL ?? '', config.PUBLIC_BASE_URL ?? '']
      .map((u) => originOf(u.trim()))
      .filter((o): o is string => o !== null),
  );
  const middleware = session({
    name: names.session,
    store: new PostgresSessionStore(dataSource, ttlMs),
    secret,
    resave: false,
    saveUninitialized: false,
    rolling: true,
    cookie: { httpOnly: true, sameSite: 'lax', secure, maxAge: ttlMs, path: '/' },
  });
  return {
    middleware,
    csrfGuard(req, _res, next) {
      try {
        checkRequestOrigin(req, allowedOrigins);
        checkCsrfToken(req, req.sessionID, secret, names.csrf);
        next();
      } catch (error) {
        next(error);
      }
    },
    setCsrfCookie(res, sessionId) {
      // Readable by the page, which echoes it in X-CSRF-Token on every state-changing request.
      res.cookie(names.csrf, csrfToken(secret, sessionId), {
        httpOnly: false,
        sameSite: 'lax',
        secure,
        maxAge: ttlMs,
        path: '/',
      });
    },
    clear(res) {
      res.clearCookie(names.session, { path: '/' });
      res.clearCookie(names.csrf, { path: '/' });
    },
    sent(req) {
      return (req.headers.cookie ?? '').split(';').some((c) => c.trim().startsWith(`${names.session}=`));
    },
  };
}
