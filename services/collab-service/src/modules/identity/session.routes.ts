import {
  AuthConfigResponse,
  ClientConfigResponse,
  type CollabSessionEndedData,
  ErrorBodyDto,
  RoutingKeys,
  SessionResponse,
} from '@hwp/contracts';
import { AppError, type Bus, bearerOf, type RouteMount, UnauthorizedError } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { Authentication, EndedSessions } from './authentication';
import type { CollabUserEntity } from './collab-user.entity';
import type { CookieSessions } from './cookie-sessions';
import { presentUser, type UsersService } from './users.service';

/**
 * The browser sessions' cookies on every request: a bearer request is authenticated by its token
 * alone and gets no session object (less work and less memory per request, which an open event
 * stream keeps); only the routes that turn a token into a cookie, or end one, need the session.
 * Requests authenticated by the session cookie alone (no bearer token) are checked for CSRF.
 */
export const sessionCookies =
  (cookies: CookieSessions): RouteMount =>
  (_api, app) => {
    app.use((req, res, next) =>
      bearerOf(req) && !req.path.startsWith('/api/auth/') ? next() : cookies.middleware(req, res, next),
    );
    app.use((req, res, next) =>
      bearerOf(req) || !req.session?.userId ? next() : cookies.csrfGuard(req, res, next),
    );
  };

/** Exchanges an API host access token for the session cookie. */
export const exchangeToken =
  (auth: Authentication, users: UsersService, cookies: CookieSessions): RouteMount =>
  (api) =>
    api.route({
      method: 'post',
      path: '/api/auth/session',
      summary: 'Exchange an API host access token (bearer) for a session cookie',
      description:
        'Sets an HttpOnly, SameSite=Lax session cookie (Secure and `__Host-` prefixed in production; the id is ' +
        'rotated on every exchange) and a readable `hwp.csrf` cookie: requests that change state with the session ' +
        'cookie must send its value in X-CSRF-Token and come from this host or an allowed origin (CORS_ORIGINS, ' +
        'SITE_URL), else 403. Bearer requests need neither.',
      tags: ['session'],
      security: ['bearerAuth'],
      responses: { 200: { description: 'Signed in', schema: SessionResponse } },
      handler: async ({ req, res }) => {
        const token = bearerOf(req);
        if (!token)
          throw new UnauthorizedError('Send the API host access token as Authorization: Bearer <token>');
        const verified = await auth.verifyLive(token);
        const user = await users.ensureFromToken({ id: verified.userId, email: verified.email });
        await new Promise<void>((done, fail) =>
          req.session.regenerate((error) => (error ? fail(error) : done())),
        );
        req.session.userId = user.id;
        req.session.apiSessionId = verified.sessionId;
        await new Promise<void>((done, fail) => req.session.save((error) => (error ? fail(error) : done())));
        cookies.setCsrfCookie(res, req.sessionID);
        res.json({ user: presentUser(user) });
      },
    });

/** Ends the session cookie, here and on every replica. */
export const logout =
  (cookies: CookieSessions, sessions: EndedSessions, bus: Bus): RouteMount =>
  (api) =>
    api.route({
      method: 'post',
      path: '/api/auth/logout',
      summary: 'End the session cookie',
      tags: ['session'],
      responses: { 204: { description: 'Signed out' } },
      handler: async ({ req, res }) => {
        const userId = req.session?.userId;
        if (userId) {
          const ended = `cookie:${req.sessionID}`;
          await new Promise<void>((done, fail) =>
            req.session.destroy((error) => (error ? fail(error) : done())),
          );
          sessions.ended([ended]);
          // The streams opened with this cookie on the other replicas end too (a broadcast).
          const data: CollabSessionEndedData = { session_keys: [ended] };
          await bus.transaction((manager) =>
            bus.outbox.add(manager, { type: RoutingKeys.collabSessionEnded, actor: userId, data }),
          );
        }
        cookies.clear(res);
        res.status(204).end();
      },
    });

/** The signed-in user, or null. */
export const currentSession =
  (auth: Authentication, cookies: CookieSessions): RouteMount =>
  (api) =>
    api.route({
      method: 'get',
      path: '/api/session',
      summary: 'The signed-in user, or { user: null }',
      tags: ['session'],
      responses: {
        200: { description: 'The current user or null', schema: SessionResponse },
        401: { description: 'A bearer token was sent and is invalid or expired', schema: ErrorBodyDto },
      },
      handler: async ({ req, res }) => {
        res.setHeader('Cache-Control', 'no-store');
        let user: CollabUserEntity | null;
        try {
          user = await auth.identify(req);
        } catch (error) {
          // A session cookie whose API host session ended (logout elsewhere, revocation) is no
          // session: null, and the cookie is cleared. A refused bearer token stays a 401.
          if (!(error instanceof AppError && error.status === 401) || bearerOf(req)) throw error;
          user = null;
        }
        // A cookie that names no live session (ended here or elsewhere) is cleared.
        if (!user && !bearerOf(req) && cookies.sent(req)) cookies.clear(res);
        res.json({ user: user ? presentUser(user) : null });
      },
    });

/** Whether joining needs an invitation. */
export const authConfig =
  (config: CollabConfig): RouteMount =>
  (api) =>
    api.route({
      method: 'get',
      path: '/api/auth/config',
      summary: 'Whether joining needs an invitation',
      tags: ['session'],
      responses: { 200: { description: 'Auth configuration', schema: AuthConfigResponse } },
      handler: ({ res }) => {
        res.json({ requiresInvitation: config.REQUIRES_INVITATION });
      },
    });

/** What the client is configured with. */
export const clientConfig =
  (config: CollabConfig): RouteMount =>
  (api) =>
    api.route({
      method: 'get',
      path: '/v1/config',
      summary: 'Client configuration',
      tags: ['session'],
      responses: { 200: { description: 'Client configuration', schema: ClientConfigResponse } },
      handler: ({ res }) => {
        res.json({ branchSuffixWrites: config.BRANCH_SUFFIX_WRITES });
      },
    });
