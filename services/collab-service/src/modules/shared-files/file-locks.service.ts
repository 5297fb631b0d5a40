import {
  type FileLock,
  LOCK_TTL_DEFAULT_MS,
  type LockAllResult,
  type LockNotifyResult,
  type UnlockResult,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { CollabEvents } from '../events/events.service';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { FileComments } from './file-comments.service';
import { type FileEvents, presentLock } from './file-guards';
import { FileLocksRepository, type LockRow } from './file-locks.repository';
import { parsePath, pathOf } from './file-paths';
import { SharedFilesRepository } from './shared-files.repository';

/** 409: another user holds the lock (`held` is null when it ended in the meantime). */
function lockedBy(path: string, held: LockRow | null): ConflictError {
  return new ConflictError(`${path} is locked by ${held?.owner_username ?? 'another user'}`, {
    lockedBy: held?.owner_username,
    lockedUntil: held?.expires_at.toISOString(),
  });
}

/**
 * Soft locks (section 3.1, DECISIONS.md 6): a lock is a row with an expiry; it is valid while the
 * expiry is ahead, so ending by time needs no job. Taking a lock is one statement, so of racing
 * callers exactly one wins.
 */
export class FileLocksService {
  /**
   * Lock statements in flight, by workspace and path, each resolving to the lock it took (null when
   * it took none): attempts that arrive meanwhile wait for that outcome instead of racing it.
   */
  private readonly deciding = new Map<string, Promise<LockRow | null>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: FileEvents & Pick<CollabEvents, 'within' | 'published'>,
    private readonly comments: FileComments,
  ) {}

  private repo(access: WorkspaceScope) {
    return new FileLocksRepository(access.in(this.dataSource.manager));
  }

  /** The valid lock on a path, or null (section 4.10: "current lock info or null"). */
  async current(access: WorkspaceScope, path: string): Promise<FileLock | null> {
    const lock = await this.repo(access).validLock(pathOf(parsePath(path)));
    return lock ? presentLock(lock) : null;
  }

  /**
   * 409 when another user holds a valid lock; the holder re-locking refreshes the ttl. An attempt
   * that arrives while another attempt's statement on the path is running is concurrent with it, so
   * it may be ordered right after it: when that statement took the lock for another user (valid for
   * at least the minimum ttl), this attempt is a 409 without a statement of its own. Every other case
   * (the lock taken by the same user, not taken, or a failed statement) goes to the database.
   */
  async lock(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    path: string,
    ttlMs?: number,
  ): Promise<FileLock> {
    const canonical = pathOf(parsePath(path));
    const key = `${access.id}/${canonical}`;
    const running = this.deciding.get(key);
    if (running) {
      const taken = await running;
      if (taken && taken.owner_id !== actor.id) throw lockedBy(canonical, taken);
    }
    // One autocommit statement takes the lock and writes its event (no transaction round trips).
    const attempt = this.repo(access).acquire(
      canonical,
      actor.id,
      actor.username,
      ttlMs ?? LOCK_TTL_DEFAULT_MS,
      (statement) => this.events.within(access.ref, 'lock', { actor, path: canonical }, statement),
    );
    if (!this.deciding.has(key)) {
      const outcome = attempt.then(
        (result) => ('won' in result ? result.won : null),
        () => null,
      );
      this.deciding.set(key, outcome);
      void outcome.then(() => {
        if (this.deciding.get(key) === outcome) this.deciding.delete(key);
      });
    }
    const result = await attempt;
    if (!('won' in result)) {
      throw lockedBy(canonical, result.held ?? (await this.repo(access).validLock(canonical)));
    }
    this.events.published(access.id);
    return presentLock(result.won);
  }

  /**
   * Releases the caller's lock: another lock id, or a lock the caller does not hold (its id is shown
   * to every member, so it is no secret), is 403; no valid lock is `{ unlocked: false }`. Someone
   * else's lock is removed by a manager+ with force-unlock.
   */
  async unlock(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    path: string,
    lockId: string,
  ): Promise<UnlockResult> {
    const canonical = pathOf(parsePath(path));
    return this.dataSource.transaction(async (manager) => {
      const repo = new FileLocksRepository(access.in(manager));
      const held = await repo.validLock(canonical);
      if (!held) return { unlocked: false };
      if (held.lock_id !== lockId) throw new ForbiddenError(`That is not the lock on ${canonical}`);
      if (held.owner_id !== actor.id) {
        throw new ForbiddenError(
          `${canonical} is locked by ${held.owner_username}: only they release it (a manager+ may force-unlock)`,
        );
      }
      await repo.release(canonical);
      await this.events.emit(
        manager,
        access.ref,
        'unlock',
        { action: 'unlocked', path: canonical, lockId },
        {
          actor,
          path: canonical,
        },
      );
      return { unlocked: true };
    });
  }

  /** Manager+: removes anyone's lock; the owner is told, and a message becomes a comment on the file. */
  async forceUnlock(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    path: string,
    message?: string,
  ): Promise<UnlockResult> {
    const canonical = pathOf(parsePath(path));
    return this.dataSource.transaction(async (manager) => {
      const repo = new FileLocksRepository(access.in(manager));
      const held = await repo.validLock(canonical);
      if (!held) return { unlocked: false };
      await repo.release(canonical);
      const data = {
        action: 'force-unlocked',
        path: canonical,
        lockId: held.lock_id,
        owner: held.owner_username,
        message: message ?? null,
      };
      await this.events.emit(manager, access.ref, 'unlock', data, { actor, path: canonical });
      if (held.owner_id !== actor.id) {
        await this.events.emit(manager, access.ref, 'unlock', data, {
          actor,
          path: canonical,
          to: { id: held.owner_id, username: held.owner_username },
        });
      }
      if (message?.trim()) {
        await this.comments.post(
          manager,
          actor,
          access,
          canonical,
          `Lock of ${held.owner_username} removed: ${message.trim()}`,
        );
      }
      return { unlocked: true };
    });
  }

  /** Asks the holder to release: a `lock.request` event to them only. */
  async request(actor: CollabUserEntity, access: WorkspaceScope, path: string): Promise<LockNotifyResult> {
    const canonical = pathOf(parsePath(path));
    const held = await this.repo(access).validLock(canonical);
    if (!held || held.owner_id === actor.id) return { notified: false };
    await this.events.emit(
      this.dataSource.manager,
      access.ref,
      'lock.request',
      { path: canonical, from: actor.username, lockId: held.lock_id },
      { actor, path: canonical, to: { id: held.owner_id, username: held.owner_username } },
    );
    return { notified: true };
  }

  /** Manager+: locks every live file nobody else holds. */
  async lockAll(actor: CollabUserEntity, access: WorkspaceScope, ttlMs?: number): Promise<LockAllResult> {
    return this.dataSource.transaction(async (manager) => {
      const files = new SharedFilesRepository(access.in(manager));
      let count = 0;
      const skipped: string[] = [];
      for (const file of await files.list()) {
        const path = `${access.name}/${file.username}/${file.filename}`;
        if (
          'won' in (await files.locks.acquire(path, actor.id, actor.username, ttlMs ?? LOCK_TTL_DEFAULT_MS))
        )
          count++;
        else skipped.push(path);
      }
      await this.events.emit(
        manager,
        access.ref,
        'lock',
        { action: 'locked-all', count, skipped },
        { actor },
      );
      return { count, skipped };
    });
  }

  async unlockAll(actor: CollabUserEntity, access: WorkspaceScope): Promise<LockAllResult> {
    return this.dataSource.transaction(async (manager) => {
      const count = await new FileLocksRepository(access.in(manager)).releaseAll();
      await this.events.emit(manager, access.ref, 'unlock', { action: 'unlocked-all', count }, { actor });
      return { count, skipped: [] };
    });
  }
}
