import { AuthResponse, ErrorBodyDto } from '@hwp/contracts';
import {
  type ApiRouter,
  type RawQuery,
  type RouteSpec,
  UnauthorizedError,
  ValidationError,
} from '@hwp/platform';
import type { Request, RequestHandler, Response } from 'express';
import type { Authenticated, AuthService } from '../auth.service';
import {
  COOKIES,
  type CookieSettings,
  checkCsrf,
  type Principal,
  requestCookies,
  setSessionCookies,
} from '../authenticate';
import type { ClientMeta, SessionsService } from '../sessions.service';
import type { SigningKeys } from '../signing-keys';

export interface AuthRouteDeps {
  auth: AuthService;
  sessions: SessionsService;
  keys: SigningKeys;
  cookies: CookieSettings;
  authenticate: RequestHandler;
  /** Standard per-client limit (60/min). */
  standardLimit: RequestHandler;
  /** The same limit, refusing (503) while its store is unreachable: for routes that take credentials. */
  credentialLimit: RequestHandler;
  /** Failed-login limits per account and per IP. */
  loginLimits: RequestHandler[];
  /** Where GET /auth/verify lands when the link carries no allowed redirect. */
  siteUrl: string;
}

export const TAGS = ['auth'];
export const badInput = { description: 'Invalid input', schema: ErrorBodyDto };
export const authResponses = { 200: { description: '`{ user, session }`', schema: AuthResponse } };
export const codeResponses = {
  ...authResponses,
  401: {
    description: '`otp_invalid`, or `otp_expired` (expired, used or 5 wrong tries)',
    schema: ErrorBodyDto,
  },
};

/** An auth route: tagged and rate limited; `before` and `security` come from its kind. */
export type AuthRouteSpec<Body, Query> = Omit<RouteSpec<Body, Query>, 'before' | 'tags' | 'rateLimited'>;
type AuthRouteFn = <Body = unknown, Query = RawQuery>(spec: AuthRouteSpec<Body, Query>) => void;

/** The deps plus the three kinds of auth route (open, login-limited, signed in). */
export interface AuthRouting extends AuthRouteDeps {
  api: ApiRouter;
  openRoute: AuthRouteFn;
  loginRoute: AuthRouteFn;
  signedInRoute: AuthRouteFn;
}

export function authRouting(api: ApiRouter, deps: AuthRouteDeps): AuthRouting {
  /** Every auth route but the JWKS: tagged, rate limited, behind the given middleware. */
  const routeBehind =
    (before: RequestHandler[], security?: string[]): AuthRouteFn =>
    (spec) => {
      api.route({ tags: TAGS, rateLimited: true, before, ...(security ? { security } : {}), ...spec });
    };
  return {
    ...deps,
    api,
    // Unauthenticated routes take credentials, codes or addresses: their limits fail closed.
    openRoute: routeBehind([deps.credentialLimit]),
    loginRoute: routeBehind([deps.credentialLimit, ...deps.loginLimits]),
    signedInRoute: routeBehind([deps.authenticate, deps.standardLimit], ['bearerAuth']),
  };
}

export function clientMeta(req: Request): ClientMeta {
  return { ip: req.ip, userAgent: req.get('user-agent') };
}

export function principal(req: Request): Principal {
  if (!req.user) throw new UnauthorizedError();
  return req.user;
}

/** Sends `{ user, session }`, and sets the session cookies when the client asked for them. */
export function sendAuthenticated(
  res: Response,
  cookies: CookieSettings,
  result: Authenticated,
  withCookies: boolean,
): void {
  if (withCookies) {
    setSessionCookies(res, cookies, {
      sessionId: result.sessionId,
      accessToken: result.session.access_token,
      refreshToken: result.session.refresh_token,
      expiresIn: result.session.expires_in,
    });
  }
  res.setHeader('Cache-Control', 'no-store');
  res.json({ user: result.user, session: result.session });
}

/** `?cookie=true` as the raw query gives it (the routes' DTOs differ in how they declare it). */
export function wantsCookies(req: Request): boolean {
  return req.query.cookie === 'true';
}

export async function passwordLogin(
  routing: AuthRouting,
  req: Request,
  res: Response,
  channel: { email: string } | { phone: string },
  password: string,
): Promise<void> {
  const result = await routing.auth.loginWithPassword(channel, password, clientMeta(req));
  sendAuthenticated(res, routing.cookies, result, wantsCookies(req));
}

/** The refresh token from the body, or from the refresh cookie (then CSRF-checked). */
export async function refreshSession(
  routing: AuthRouting,
  req: Request,
  res: Response,
  bodyToken: string | undefined,
): Promise<void> {
  const { auth, sessions, cookies } = routing;
  let token = bodyToken;
  const viaCookie = !token;
  if (!token) {
    const jar = requestCookies(req);
    token = jar[COOKIES.refresh];
    if (!token)
      throw new ValidationError('refresh_token is required', [
        { field: 'refresh_token', message: 'required' },
      ]);
    const sessionId = await sessions.sessionOfRefreshToken(token);
    if (!sessionId) throw new UnauthorizedError('Invalid refresh token: not found');
    checkCsrf(req, sessionId, cookies.secret);
  }
  const { user, issued } = await sessions.refresh(token);
  const view = await auth.getUser(user.id);
  const result = { user: view, session: issued.session, sessionId: issued.sessionId };
  sendAuthenticated(res, cookies, result, viaCookie || wantsCookies(req));
}
