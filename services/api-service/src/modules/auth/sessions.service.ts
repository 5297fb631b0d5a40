import type { Session } from '@hwp/contracts';
import { type Bus, newId, UnauthorizedError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { IdentityEntity } from './identity.entity';
import { AuthSessionEntity, RefreshTokenEntity } from './session.entity';
import { SessionRevocations } from './session-revocations';
import { type AccessTokenSigner, randomToken, sameHash, sha256, successorToken } from './tokens';
import { UserEntity } from './user.entity';

/** Where a sign-in came from (kept on the session for the user's device list and forensics). */
export interface ClientMeta {
  ip?: string;
  userAgent?: string;
}

export interface IssuedSession {
  sessionId: string;
  session: Session;
}

/**
 * What sign-in needs of tenancy: a user without a tenant gets a personal one (DECISIONS.md
 * section 2). An interface, so accounts do not depend on the tenants module (tenants use accounts).
 */
export interface PersonalTenants {
  ensurePersonalTenant(manager: EntityManager, user: UserEntity): Promise<void>;
}

export interface SessionSettings {
  secret: string;
  /** Lifetime of an access token: a revoked session is listed that long. */
  tokenTtlSeconds: number;
  reuseIntervalSeconds: number;
  checkCacheMs: number;
}

const CACHE_LIMIT = 50_000;

/**
 * Sessions and their refresh tokens. A refresh token is single use: refreshing revokes it and
 * issues its successor. Presenting a revoked token again is a replay unless it is the immediate
 * predecessor of the live token and within the grace window (a client retrying a lost response);
 * a replay deletes the whole session, so the thief's and the victim's tokens both stop working.
 */
export class SessionsService {
  private readonly alive = new Map<string, { alive: boolean; userId?: string; until: number }>();
  readonly revocations: SessionRevocations;
  private readonly dataSource: DataSource;

  constructor(
    private readonly bus: Bus,
    dataSource: DataSource,
    private readonly signer: AccessTokenSigner,
    /** Also used when an account is created (Accounts.create). */
    readonly tenants: PersonalTenants,
    private readonly settings: SessionSettings,
  ) {
    this.dataSource = dataSource;
    this.revocations = new SessionRevocations(bus.outbox, settings.tokenTtlSeconds);
  }

  private sign(user: UserEntity, sessionId: string, refreshToken: string): IssuedSession {
    const { token, expiresAt } = this.signer.sign({
      userId: user.id,
      sessionId,
      email: user.email,
      phone: user.phone,
    });
    return {
      sessionId,
      session: {
        access_token: token,
        refresh_token: refreshToken,
        expires_in: this.signer.expiresInSeconds,
        expires_at: expiresAt,
        token_type: 'bearer',
      },
    };
  }

  /** Opens a session for a user who just proved who they are (inside the caller's transaction). */
  async start(
    manager: EntityManager,
    user: UserEntity,
    via: 'email' | 'phone',
    meta: ClientMeta,
  ): Promise<IssuedSession> {
    const now = new Date();
    const sessionId = newId();
    await manager.insert(AuthSessionEntity, {
      id: sessionId,
      userId: user.id,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
      ip: meta.ip ?? null,
      createdAt: now,
      refreshedAt: null,
    });
    const refreshToken = randomToken();
    await manager.insert(RefreshTokenEntity, {
      sessionId,
      tokenHash: sha256(refreshToken),
      parentId: null,
      revokedAt: null,
      createdAt: now,
    });
    user.lastSignInAt = now;
    await manager.update(UserEntity, { id: user.id }, { lastSignInAt: now });
    await manager.update(
      IdentityEntity,
      { userId: user.id, provider: via },
      { lastSignInAt: now, updatedAt: now },
    );
    await this.tenants.ensurePersonalTenant(manager, user);
    this.alive.delete(sessionId);
    return this.sign(user, sessionId, refreshToken);
  }

  /** Exchanges a refresh token for a new pair (see the class comment for reuse). */
  async refresh(token: string): Promise<{ user: UserEntity; issued: IssuedSession }> {
    const { secret, reuseIntervalSeconds } = this.settings;
    const outcome = await this.bus.transaction(async (manager) => {
      const row = await manager
        .createQueryBuilder(RefreshTokenEntity, 'r')
        .setLock('pessimistic_write')
        .where('r.token_hash = :hash', { hash: sha256(token) })
        .getOne();
      if (!row) return { error: 'Invalid refresh token: not found' } as const;
      const session = await manager.findOne(AuthSessionEntity, {
        where: { id: row.sessionId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!session) return { error: 'Invalid refresh token: the session has ended' } as const;
      const user = await manager.findOneByOrFail(UserEntity, { id: session.userId });
      const successor = successorToken(secret, token);
      if (!row.revokedAt) {
        const now = new Date();
        await manager.update(RefreshTokenEntity, { id: row.id }, { revokedAt: now });
        await manager.insert(RefreshTokenEntity, {
          sessionId: session.id,
          tokenHash: sha256(successor),
          parentId: row.id,
          revokedAt: null,
          createdAt: now,
        });
        await manager.update(AuthSessionEntity, { id: session.id }, { refreshedAt: now });
        return { user, sessionId: session.id, refreshToken: successor } as const;
      }
      const child = await manager.findOneBy(RefreshTokenEntity, { parentId: row.id });
      const inGrace = Date.now() - row.revokedAt.getTime() <= reuseIntervalSeconds * 1000;
      if (inGrace && child && !child.revokedAt && sameHash(child.tokenHash, sha256(successor))) {
        return { user, sessionId: session.id, refreshToken: successor } as const;
      }
      await manager.delete(AuthSessionEntity, { id: session.id });
      await this.revocations.record(manager, session.userId, [session.id], 'refresh_token_reuse');
      return { error: 'Refresh token already used: the session was revoked', revoked: session.id } as const;
    });
    if ('error' in outcome) {
      if ('revoked' in outcome && outcome.revoked) this.markDead(outcome.revoked);
      throw new UnauthorizedError(outcome.error);
    }
    return { user: outcome.user, issued: this.sign(outcome.user, outcome.sessionId, outcome.refreshToken) };
  }

  /** The session a refresh token belongs to (cookie refresh checks CSRF against it), or null. */
  async sessionOfRefreshToken(token: string): Promise<string | null> {
    const row = await this.dataSource.manager.findOneBy(RefreshTokenEntity, { tokenHash: sha256(token) });
    return row?.sessionId ?? null;
  }

  /** Ends this session, the user's other sessions, or all of them. */
  async revoke(userId: string, sessionId: string, scope: 'local' | 'others' | 'global'): Promise<void> {
    const ids = await this.bus.transaction(async (manager) => {
      const where = scope === 'local' ? 'AND id = $2' : scope === 'others' ? 'AND id <> $2' : '';
      const rows: [{ id: string }[], number] = await manager.query(
        `DELETE FROM auth_sessions WHERE user_id = $1 ${where} RETURNING id`,
        scope === 'global' ? [userId] : [userId, sessionId],
      );
      const ended = rows[0].map((r) => r.id);
      await this.revocations.record(manager, userId, ended, 'logout');
      return ended;
    });
    for (const id of ids) this.markDead(id);
  }

  /** Ends every session of a user but `keep` (password change), inside the caller's transaction. */
  async revokeOthersIn(manager: EntityManager, userId: string, keep: string): Promise<string[]> {
    const rows: [{ id: string }[], number] = await manager.query(
      'DELETE FROM auth_sessions WHERE user_id = $1 AND id <> $2 RETURNING id',
      [userId, keep],
    );
    const ids = rows[0].map((r) => r.id);
    await this.revocations.record(manager, userId, ids, 'password_changed');
    for (const id of ids) this.markDead(id);
    return ids;
  }

  /**
   * Whether an access token's session still exists. Cached briefly, so a session revoked on another
   * replica stops working within SESSION_CHECK_CACHE_MS (2 s by default).
   */
  async isAlive(sessionId: string, userId: string): Promise<boolean> {
    const cached = this.alive.get(sessionId);
    const now = Date.now();
    // A session belongs to one user: a token naming another user with this session id is refused.
    if (cached && cached.until > now) return cached.alive && cached.userId === userId;
    const found = await this.dataSource.manager.exists(AuthSessionEntity, {
      where: { id: sessionId, userId },
    });
    if (this.alive.size >= CACHE_LIMIT) {
      const oldest = this.alive.keys().next().value;
      if (oldest !== undefined) this.alive.delete(oldest);
    }
    // Only a confirmed (session, user) pair is cached as alive; a mismatch is not cached at all.
    if (found) this.alive.set(sessionId, { alive: true, userId, until: now + this.settings.checkCacheMs });
    return found;
  }

  private markDead(sessionId: string): void {
    this.alive.set(sessionId, { alive: false, until: Date.now() + this.settings.checkCacheMs });
  }
}
