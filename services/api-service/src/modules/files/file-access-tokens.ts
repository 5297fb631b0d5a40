import { createHmac } from 'node:crypto';
import { AppError, UnauthorizedError } from '@hwp/platform';
import jwt from 'jsonwebtoken';

/** Minutes a file access token stays valid (DECISIONS.md section 3). */
export const FILE_TOKEN_MINUTES = 15;
const AUDIENCE = 'hwp-file-access';

export interface FileAccessClaims {
  /** The file it opens. */
  fileId: string;
  tenantId: string;
  /** Who asked for it. */
  userId: string;
  /** The session of the access token it was asked with: the token ends with it. */
  sessionId?: string;
}

/**
 * Temporary download tokens (`GET /files/{id}/access-token`): HS256 JWTs keyed by a key derived
 * from the service secret, bound to one file and the read action, 15 minutes.
 */
export class FileAccessTokens {
  private readonly key: Buffer;

  constructor(
    secret: string,
    /** Whether the issuing session still exists (checked like an access token's: logout ends it). */
    private readonly sessionAlive: (sessionId: string, userId: string) => Promise<boolean>,
  ) {
    this.key = createHmac('sha256', secret).update('file-access-token:v1').digest();
  }

  issue(claims: FileAccessClaims, now = new Date()): { token: string; expires_at: string } {
    const exp = Math.floor(now.getTime() / 1000) + FILE_TOKEN_MINUTES * 60;
    const token = jwt.sign(
      {
        fid: claims.fileId,
        tid: claims.tenantId,
        ...(claims.sessionId ? { sid: claims.sessionId } : {}),
        act: 'read',
        exp,
        iat: Math.floor(now.getTime() / 1000),
      },
      this.key,
      { algorithm: 'HS256', audience: AUDIENCE, subject: claims.userId },
    );
    return { token, expires_at: new Date(exp * 1000).toISOString() };
  }

  /** The claims of a token of this service for reading; null when it is not a file access token at all. */
  async verify(token: string): Promise<FileAccessClaims | null> {
    const decoded = jwt.decode(token, { json: true });
    if (!decoded || decoded.aud !== AUDIENCE) return null;
    const claims = this.check(token);
    if (claims.sessionId && !(await this.sessionAlive(claims.sessionId, claims.userId))) {
      throw new UnauthorizedError('The session that issued this file access token has ended');
    }
    return claims;
  }

  private check(token: string): FileAccessClaims {
    try {
      const claims = jwt.verify(token, this.key, {
        algorithms: ['HS256'],
        audience: AUDIENCE,
      }) as jwt.JwtPayload;
      if (claims.act !== 'read' || typeof claims.fid !== 'string' || typeof claims.tid !== 'string')
        throw new UnauthorizedError('Invalid file access token');
      return {
        fileId: claims.fid,
        tenantId: claims.tid,
        userId: String(claims.sub),
        ...(typeof claims.sid === 'string' ? { sessionId: claims.sid } : {}),
      };
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError)
        throw new AppError('token_expired', 'The file access token has expired');
      if (error instanceof UnauthorizedError) throw error;
      throw new UnauthorizedError('Invalid file access token');
    }
  }
}
