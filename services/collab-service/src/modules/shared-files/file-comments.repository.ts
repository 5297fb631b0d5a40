import { entityRows, newId, queryRows } from '@hwp/platform';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { SharedFileCommentEntity } from './shared-file.entity';

/** A member a comment may mention. */
export interface Mentionable {
  id: string;
  username: string;
  email: string;
}

/**
 * The comments of one workspace's paths: read through the scope's repository; written with SQL
 * (the database stamps `created_at`, as the versions it is compared with) in the scope's workspace.
 */
export class FileCommentsRepository {
  private readonly comments: WorkspaceScopedRepository<SharedFileCommentEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.comments = scope.repo(SharedFileCommentEntity);
  }

  /** The comments on a path, oldest first. */
  onPath(path: string): Promise<SharedFileCommentEntity[]> {
    return this.comments.find({ where: { path }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** The workspace's members among `usernames` (who a comment's `@username`s reach). */
  members(usernames: string[]): Promise<Mentionable[]> {
    if (usernames.length === 0) return Promise.resolve([]);
    return queryRows<Mentionable>(
      this.scope.manager,
      `SELECT u.id, u.username, u.email FROM workspace_members m JOIN collab_users u ON u.id = m.user_id
        WHERE m.workspace_id = $1 AND u.username = ANY($2::text[])`,
      [this.scope.id, usernames],
    );
  }

  async add(comment: {
    path: string;
    authorId: string;
    authorUsername: string;
    body: string;
    mentions: string[];
  }): Promise<SharedFileCommentEntity> {
    const [row] = await queryRows<Record<string, unknown>>(
      this.scope.manager,
      `INSERT INTO shared_file_comments (id, workspace_id, path, author_id, author_username, body, mentions)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [
        newId(),
        this.scope.id,
        comment.path,
        comment.authorId,
        comment.authorUsername,
        comment.body,
        comment.mentions,
      ],
    );
    return entityRows(this.scope.manager.connection, SharedFileCommentEntity)(row);
  }
}
