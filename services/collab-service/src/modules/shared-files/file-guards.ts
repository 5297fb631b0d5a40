import type { CollabEventType, FileLock, SharedFile } from '@hwp/contracts';
import { AppError, ForbiddenError, NotFoundError } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { LockRow } from './file-locks.repository';
import type { FilePath } from './file-paths';
import { pathOf } from './file-paths';
import type { SharedFileEntity } from './shared-file.entity';
import type { ListedFile, SharedFilesRepository, VersionRow } from './shared-files.repository';

/** The workspace stream, as the shared files use it. */
export interface FileEvents {
  emit(
    manager: EntityManager,
    workspace: { id: string; name: string },
    type: CollabEventType,
    data: object,
    meta: {
      actor: { id: string; username: string } | 'system';
      path?: string;
      to?: { id: string; username: string };
    },
  ): Promise<unknown>;
}

/** A user writes their own folder; managers and owners write any (403 otherwise). */
export function assertCanWrite(access: WorkspaceScope, actor: CollabUserEntity, username: string): void {
  if (username !== actor.username && !atLeast(access.role, 'manager')) {
    throw new ForbiddenError(`Only ${username} (or a manager) writes the folder ${access.name}/${username}`);
  }
}

/** 423 while another user holds a valid lock on the path (DECISIONS.md 6: reads are never blocked). */
export async function assertUnlocked(
  repo: SharedFilesRepository,
  path: string,
  actor: CollabUserEntity,
): Promise<void> {
  const lock = await repo.locks.validLock(path);
  if (lock && lock.owner_id !== actor.id) {
    throw new AppError(
      'locked',
      `${path} is locked by ${lock.owner_username} until ${lock.expires_at.toISOString()}`,
      {
        extra: { lockedBy: lock.owner_username, lockedUntil: lock.expires_at.toISOString() },
      },
    );
  }
}

export async function liveFile(
  repo: SharedFilesRepository,
  p: FilePath,
  lock = false,
): Promise<SharedFileEntity> {
  const file = await repo.live(p.username, p.filename, lock);
  if (!file) throw new NotFoundError(`No file ${pathOf(p)}`);
  return file;
}

export function presentLock(row: LockRow): FileLock {
  return {
    path: row.path,
    lockId: row.lock_id,
    owner: row.owner_username,
    acquiredAt: row.acquired_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    ttlMs: row.expires_at.getTime() - row.acquired_at.getTime(),
  };
}

export function presentListed(workspace: string, row: ListedFile): SharedFile {
  return {
    workspace,
    username: row.username,
    filename: row.filename,
    path: `${workspace}/${row.username}/${row.filename}`,
    etag: row.sha256,
    sha256: row.sha256,
    size: Number(row.size),
    contentType: row.content_type,
    versionId: row.version_id,
    updatedAt: row.created_at.toISOString(),
    updatedBy: row.author_username,
    branchOf: row.branch_of,
  };
}

export function presentFile(workspace: string, file: SharedFileEntity, head: VersionRow): SharedFile {
  return presentListed(workspace, {
    username: file.username,
    filename: file.filename,
    branch_of: file.branchOf,
    version_id: head.id,
    sha256: head.sha256,
    size: head.size,
    content_type: head.content_type,
    created_at: head.created_at,
    author_username: head.author_username,
  });
}
