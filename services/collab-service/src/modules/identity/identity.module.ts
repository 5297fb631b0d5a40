import type { AccessTokenVerifier } from '@hwp/platform';
import { UnauthorizedError } from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import type { CollabUserEntity } from './collab-user.entity';
import { CSRF_COOKIE, SESSION_COOKIE } from './cookie-sessions';
import type { UsersService } from './users.service';

// What the identity feature (identity.feature.ts) gives the others: its exports' type, the request's
// user and session keys, and `currentUser` for handlers.

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

/** What the identity feature exports to the features after it. */
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
}
