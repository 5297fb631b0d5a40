import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { ForbiddenError } from '../errors';

/** Header a cookie-authenticated state-changing request carries: the value of the CSRF cookie. */
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method);
}

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The CSRF token of a cookie session: derived from the session, so nothing more is stored. */
export function csrfToken(secret: string, sessionId: string): string {
  return createHmac('sha256', secret).update(`csrf:${sessionId}`).digest('base64url');
}

/**
 * Signed double-submit: a state-changing request must echo HMAC(secret, session id), the value of the
 * readable `cookieName` cookie, in the X-CSRF-Token header (403 otherwise). Safe methods pass.
 */
export function checkCsrfToken(req: Request, sessionId: string, secret: string, cookieName: string): void {
  if (isSafeMethod(req.method)) return;
  const sent = req.get(CSRF_HEADER);
  if (!sent || !sameToken(sent, csrfToken(secret, sessionId))) {
    throw new ForbiddenError(
      `Cookie-authenticated requests that change state need the ${CSRF_HEADER} header (the ${cookieName} cookie's value)`,
    );
  }
}

/** `scheme://host[:port]` of a URL, or null when it is not one. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * Where a state-changing cookie request comes from, as browsers state it: `Sec-Fetch-Site`
 * (cross-site is refused; same-site only from an allowed origin) and `Origin` (the service's own
 * origin or an allowed one). Requests without either header (old browsers, non-browser clients)
 * still need the CSRF token.
 */
export function checkRequestOrigin(req: Request, allowedOrigins: ReadonlySet<string>): void {
  if (isSafeMethod(req.method)) return;
  const origin = req.get('origin');
  const site = req.get('sec-fetch-site');
  const own = `${req.protocol}://${req.get('host')}`;
  const allowed = origin !== undefined && (origin === own || allowedOrigins.has(origin));
  if (site === 'cross-site' && !allowed) {
    throw new ForbiddenError('Cross-site requests with the session cookie are refused');
  }
  if (origin !== undefined && origin !== 'null' && !allowed) {
    throw new ForbiddenError(`Requests from ${origin} with the session cookie are refused`);
  }
  if (origin === 'null' || (site === 'same-site' && !allowed)) {
    throw new ForbiddenError('Requests from this origin with the session cookie are refused');
  }
}
