import {
  AuthConfigResponse,
  ClientConfigResponse,
  type CollabSessionEndedData,
  ErrorBodyDto,
  RoutingKeys,
  SessionResponse,
} from '@hwp/contracts';
import {
  type AccessTokenVerifier,
  type ApiRouter,
  AppError,
  bearerOf,
  createAccessTokenVerifier,
  createUnauthenticatedLimiter,
  type PlatformDeps,
  UnauthorizedError,
} from '@hwp/platform';
import type { Express as ExpressApp, Request, RequestHandler } from 'express';
import type { CollabConfig } from '../../config';
import type { CollabUserEntity } from './collab-user.entity';
import { CSRF_COOKIE, createCookieSessions, SESSION_COOKIE } from './cookie-sessions';
import { RevokedSessions } from './revoked-sessions';
import { presentUser, UsersService } from './users.service';

declare module 'express-session' {
  interface SessionData {
    userId?: string;
    /** The API host session of the token this cookie was made from: it ends with that session. */
    apiSessionId?: string;
  }
}

declare global {
  namespace Express {
    interface Request {
      /** The collaboration user of the request (bearer token or session cookie). */
      collabUser?: CollabUserEntity;
      /**
       * The sessions the request's credential belongs to: the API host session of its token (or of
       * the token the cookie was made from) and, for a cookie, `cookie:<session id>`. A stream
       * opened with them ends when any of them ends.
       */
      sessionKeys?: string[];
    }
  }
}

export { CSRF_COOKIE, SESSION_COOKIE };
export const BEARER = ['bearerAuth', 'sessionCookie'];

export function currentUser(req: Request): CollabUserEntity {
  if (!req.collabUser) throw new UnauthorizedError();
  return req.collabUser;
}

export interface IdentityModule {
  users: UsersService;
  verifier: AccessTokenVerifier;
  /** 401 unless the request carries a valid bearer token or session cookie; sets `req.collabUser`. */
  requireUser: RequestHandler;
  /**
   * Tells `listener` of sessions that ended (keys as in `req.sessionKeys`): API host sessions
   * revoked anywhere (every replica hears `session.revoked.v1`), cookies signed out on any replica
   * (`collab.session_ended.v1`).
   */
  onSessionsEnded(listener: (keys: string[]) => void): void;
  install(app: ExpressApp): void;
  mount(api: ApiRouter): void;
  registerConsumer(): Promise<void>;
}

/**
 * Identity of the collaboration host (DECISIONS.md section 4): the API host's access tokens,
 * verified through its JWKS, either sent as a bearer token on every request (integrations) or
 * exchanged once for a session cookie (browsers).
 */
export function createIdentityModule(deps: PlatformDeps<CollabConfig>): IdentityModule {
  const { config, dataSource, bus } = deps;
  const users = new UsersService(dataSource);
  const verifier = createAccessTokenVerifier({
    jwksUrl: config.AUTH_JWKS_URL,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
  });
  const revoked = new RevokedSessions({
    url: config.AUTH_REVOCATIONS_URL ?? new URL('/auth/sessions/revoked', config.AUTH_JWKS_URL).toString(),
    refreshMs: config.AUTH_REVOCATIONS_REFRESH_MS,
    onLearned: (ids) => sessionsEnded(ids),
    logger: deps.logger,
  });
  const cookies = createCookieSessions(deps);
  const endedListeners: ((keys: string[]) => void)[] = [];
  const sessionsEnded = (keys: string[]) => {
    if (keys.length === 0) return;
    for (const listener of endedListeners) {
      try {
        listener(keys);
      } catch (error) {
        deps.logger.warn({ err: error }, 'a sessions-ended listener failed');
      }
    }
  };

  /** A token signed by the API host whose session has not ended (401 otherwise). */
  async function verifyLive(token: string) {
    const verified = await verifier.verify(token);
    await revoked.assertLive(verified.sessionId);
    return verified;
  }

  async function identify(req: Request): Promise<CollabUserEntity | null> {
    const token = bearerOf(req);
    if (token) {
      const verified = await verifyLive(token);
      req.sessionKeys = [verified.sessionId];
      return users.ensureFromToken({ id: verified.userId, email: verified.email });
    }
    const userId = req.session?.userId;
    if (!userId) return null;
    const apiSessionId = req.session.apiSessionId;
    req.sessionKeys = [`cookie:${req.sessionID}`, ...(apiSessionId ? [apiSessionId] : [])];
    if (apiSessionId) {
      try {
        await revoked.assertLive(apiSessionId);
      } catch (error) {
        // The session the cookie was made from ended: so does the cookie.
        if (error instanceof AppError && error.status === 401) {
          await new Promise<void>((done) => req.session.destroy(() => done()));
        }
        throw error;
      }
    }
    return users.byId(userId);
  }

  const unauthenticatedLimit = createUnauthenticatedLimiter(
    { dataSource, logger: deps.logger },
    { limit: config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE, windowMs: 60_000 },
  );
  const signIn = async (req: Request): Promise<void> => {
    const user = await identify(req);
    if (!user)
      throw new UnauthorizedError(
        'Sign in: send the API host access token as a bearer token, or the session cookie',
      );
    req.collabUser = user;
  };
  // A request with valid credentials goes on without touching the failure counter (no database
  // round trip). One without them is answered by the limiter: 429 once its address is over the
  // limit, else its 401, which counts against the address.
  const requireUser: RequestHandler = (req, res, next) => {
    signIn(req).then(
      () => next(),
      (error: unknown) => {
        if (!(error instanceof AppError && error.status === 401)) return next(error);
        unauthenticatedLimit(req, res, (limited?: unknown) => next(limited ?? error));
      },
    );
  };

  function mount(api: ApiRouter): void {
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
        const verified = await verifyLive(token);
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
          sessionsEnded([ended]);
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
          user = await identify(req);
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
  }

  return {
    users,
    verifier,
    requireUser,
    onSessionsEnded(listener) {
      endedListeners.push(listener);
    },
    install(app) {
      // A bearer request is authenticated by its token alone: it gets no session object (less work
      // and less memory per request, which an open event stream keeps). Only the routes that turn a
      // token into a cookie, or end one, need the session.
      app.use((req, res, next) =>
        bearerOf(req) && !req.path.startsWith('/api/auth/') ? next() : cookies.middleware(req, res, next),
      );
      // Only requests authenticated by the session cookie alone (no bearer token) are checked.
      app.use((req, res, next) =>
        bearerOf(req) || !req.session?.userId ? next() : cookies.csrfGuard(req, res, next),
      );
    },
    mount,
    async registerConsumer() {
      // Every replica keeps its own list: a broadcast subscription, plus full re-reads (see RevokedSessions).
      await bus.subscribeTo(
        {
          consumer: 'session-revocations',
          keys: [RoutingKeys.sessionRevoked, RoutingKeys.collabSessionEnded],
          broadcast: true,
        },
        async (event) => {
          if (event.type === RoutingKeys.collabSessionEnded) {
            // A cookie signed out on some replica (this one's streams ended already: harmless again).
            sessionsEnded(event.data.session_keys);
            return;
          }
          revoked.add(event.data);
          sessionsEnded(event.data.session_ids);
        },
      );
      revoked.start();
      deps.lifecycle.onShutdown('session-revocations', () => revoked.stop());
      await bus.subscribeTo(
        { consumer: 'user-sync', keys: [RoutingKeys.userUpdated] },
        async (event, manager) => {
          await users.apply(manager, event.data);
        },
      );
    },
  };
}
