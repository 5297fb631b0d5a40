import {
  type AccessTokenVerifier,
  AppError,
  bearerOf,
  createUnauthenticatedLimiter,
  type PlatformDeps,
  UnauthorizedError,
} from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import type { CollabConfig } from '../../config';
import type { CollabUserEntity } from './collab-user.entity';
import type { RevokedSessions } from './revoked-sessions';
import type { UsersService } from './users.service';

/**
 * Sessions that ended (keys as in `req.sessionKeys`): API host sessions revoked anywhere, cookies
 * signed out on any replica. Listeners (the event hub) end the streams opened with them.
 */
export class EndedSessions {
  private readonly listeners: ((keys: string[]) => void)[] = [];

  constructor(private readonly logger: PlatformDeps<CollabConfig>['logger']) {}

  listen(listener: (keys: string[]) => void): void {
    this.listeners.push(listener);
  }

  ended(keys: string[]): void {
    if (keys.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(keys);
      } catch (error) {
        this.logger.warn({ err: error }, 'a sessions-ended listener failed');
      }
    }
  }
}

/**
 * Who is calling: the API host's access token (verified through its JWKS, its session not revoked)
 * sent as a bearer token, or the session cookie made from one.
 */
export class Authentication {
  /** 401 unless the request carries a valid bearer token or session cookie; sets `req.collabUser`. */
  readonly requireUser: RequestHandler;

  constructor(
    private readonly verifier: AccessTokenVerifier,
    private readonly revoked: RevokedSessions,
    private readonly users: UsersService,
    deps: PlatformDeps<CollabConfig>,
  ) {
    const unauthenticatedLimit = createUnauthenticatedLimiter(
      { dataSource: deps.dataSource, logger: deps.logger },
      { limit: deps.config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE, windowMs: 60_000 },
    );
    // A request with valid credentials goes on without touching the failure counter (no database
    // round trip). One without them is answered by the limiter: 429 once its address is over the
    // limit, else its 401, which counts against the address.
    this.requireUser = (req, res, next) => {
      this.signIn(req).then(
        () => next(),
        (error: unknown) => {
          if (!(error instanceof AppError && error.status === 401)) return next(error);
          unauthenticatedLimit(req, res, (limited?: unknown) => next(limited ?? error));
        },
      );
    };
  }

  /** A token signed by the API host whose session has not ended (401 otherwise). */
  async verifyLive(token: string) {
    const verified = await this.verifier.verify(token);
    await this.revoked.assertLive(verified.sessionId);
    return verified;
  }

  /** The user of the request's bearer token or session cookie; null without either. */
  async identify(req: Request): Promise<CollabUserEntity | null> {
    const token = bearerOf(req);
    if (token) {
      const verified = await this.verifyLive(token);
      req.sessionKeys = [verified.sessionId];
      return this.users.ensureFromToken({ id: verified.userId, email: verified.email });
    }
    const userId = req.session?.userId;
    if (!userId) return null;
    const apiSessionId = req.session.apiSessionId;
    req.sessionKeys = [`cookie:${req.sessionID}`, ...(apiSessionId ? [apiSessionId] : [])];
    if (apiSessionId) {
      try {
        await this.revoked.assertLive(apiSessionId);
      } catch (error) {
        // The session the cookie was made from ended: so does the cookie.
        if (error instanceof AppError && error.status === 401) {
          await new Promise<void>((done) => req.session.destroy(() => done()));
        }
        throw error;
      }
    }
    return this.users.byId(userId);
  }

  private async signIn(req: Request): Promise<void> {
    const user = await this.identify(req);
    if (!user)
      throw new UnauthorizedError(
        'Sign in: send the API host access token as a bearer token, or the session cookie',
      );
    req.collabUser = user;
  }
}
