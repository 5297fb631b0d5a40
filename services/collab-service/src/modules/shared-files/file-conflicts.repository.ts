import { newId, queryRows } from '@hwp/platform';
import { IsNull } from 'typeorm';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { SharedFileConflictEntity } from './shared-file.entity';

/** An open conflict as listed for a folder. */
export interface OpenConflict {
  id: string;
  base: string;
  copy: string;
  author: string;
  sha256: string;
  created_at: Date;
}

/**
 * The conflict copies of one workspace's files: joins with the files and the row lock as SQL in the
 * scope's workspace, resolving through the scope's repository.
 */
export class FileConflictsRepository {
  private readonly conflicts: WorkspaceScopedRepository<SharedFileConflictEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.conflicts = scope.repo(SharedFileConflictEntity);
  }

  /** Records a conflict copy of a file (stamped by the database, as the versions). */
  async add(baseFileId: string, conflictFileId: string, authorId: string): Promise<void> {
    await queryRows(
      this.scope.manager,
      'INSERT INTO shared_file_conflicts (id, workspace_id, base_file_id, conflict_file_id, author_id) VALUES ($1, $2, $3, $4, $5)',
      [newId(), this.scope.id, baseFileId, conflictFileId, authorId],
    );
  }

  /** The open conflicts of a folder's files whose copy is live, oldest first. */
  open(username: string): Promise<OpenConflict[]> {
    return queryRows<OpenConflict>(
      this.scope.manager,
      `SELECT c.id, b.filename AS base, f.filename AS copy, u.username AS author, v.sha256, c.created_at
         FROM shared_file_conflicts c
         JOIN shared_files b ON b.id = c.base_file_id JOIN shared_files f ON f.id = c.conflict_file_id
         JOIN shared_file_versions v ON v.id = f.current_version_id JOIN collab_users u ON u.id = c.author_id
        WHERE c.workspace_id = $1 AND b.username = $2 AND c.resolved_at IS NULL AND f.deleted_at IS NULL
        ORDER BY c.created_at, c.id`,
      [this.scope.id, username],
    );
  }

  /** A file's open conflicts with a live copy, locked until the transaction ends. */
  lockOpenOf(baseFileId: string): Promise<{ id: string; conflict_file_id: string; filename: string }[]> {
    return queryRows(
      this.scope.manager,
      `SELECT c.id, c.conflict_file_id, f.filename FROM shared_file_conflicts c JOIN shared_files f ON f.id = c.conflict_file_id
        WHERE c.workspace_id = $1 AND c.base_file_id = $2 AND c.resolved_at IS NULL AND f.deleted_at IS NULL FOR UPDATE OF c`,
      [this.scope.id, baseFileId],
    );
  }

  /** Every open conflict of the file, resolved by the actor. */
  async resolveAll(baseFileId: string, actorId: string): Promise<void> {
    await this.conflicts.update(
      { baseFileId, resolvedAt: IsNull() },
      { resolvedAt: new Date(), resolvedBy: actorId },
    );
  }
}
