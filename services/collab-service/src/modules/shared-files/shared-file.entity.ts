import { Column, Entity, PrimaryColumn } from 'typeorm';
import { registerWorkspaceOwned, WorkspaceRow } from '../workspace-access/workspace-scope';

/**
 * The workspace-owned tables of the shared files (migration CreateSharedFiles1764200000000, which
 * holds what the decorators cannot say: the partial unique indexes, the CHECKs, the defaults).
 * Versions have no workspace column: they are reached through a file found in the workspace.
 */

/** A file of `<workspace>/<username>/`: live, or in the trash until `purge_at`. */
@Entity({ name: 'shared_files' })
export class SharedFileEntity extends WorkspaceRow {
  @Column('text')
  username: string;

  @Column('text')
  filename: string;

  @Column({ name: 'current_version_id', type: 'uuid', nullable: true })
  currentVersionId: string | null;

  @Column({ name: 'branch_of', type: 'text', nullable: true })
  branchOf: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  @Column({ name: 'deleted_by', type: 'uuid', nullable: true })
  deletedBy: string | null;

  @Column({ name: 'purge_at', type: 'timestamptz', nullable: true })
  purgeAt: Date | null;
}

/** A branch of a file: its own file (suffix writes) or a line of the base file's versions. */
@Entity({ name: 'shared_file_branches' })
export class SharedFileBranchEntity extends WorkspaceRow {
  @Column('text')
  username: string;

  @Column('text')
  base: string;

  @Column('text')
  name: string;

  @Column({ name: 'file_id', type: 'uuid' })
  fileId: string;

  @Column({ name: 'suffix_file', type: 'boolean' })
  suffixFile: boolean;

  @Column({ name: 'base_version_id', type: 'uuid', nullable: true })
  baseVersionId: string | null;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}

/** A soft lock on a path: valid while `expires_at` is ahead. */
@Entity({ name: 'shared_file_locks' })
export class SharedFileLockEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @PrimaryColumn('text')
  path: string;

  @Column({ name: 'lock_id', type: 'uuid' })
  lockId: string;

  @Column({ name: 'owner_id', type: 'uuid' })
  ownerId: string;

  @Column({ name: 'owner_username', type: 'text' })
  ownerUsername: string;

  @Column({ name: 'acquired_at', type: 'timestamptz' })
  acquiredAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}

/** A comment on a path, with the members it mentions. */
@Entity({ name: 'shared_file_comments' })
export class SharedFileCommentEntity extends WorkspaceRow {
  @Column('text')
  path: string;

  @Column({ name: 'author_id', type: 'uuid' })
  authorId: string;

  @Column({ name: 'author_username', type: 'text' })
  authorUsername: string;

  @Column('text')
  body: string;

  @Column('text', { array: true })
  mentions: string[];

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** A losing upload kept as a conflict copy of its base file, until resolved. */
@Entity({ name: 'shared_file_conflicts' })
export class SharedFileConflictEntity extends WorkspaceRow {
  @Column({ name: 'base_file_id', type: 'uuid' })
  baseFileId: string;

  @Column({ name: 'conflict_file_id', type: 'uuid' })
  conflictFileId: string;

  @Column({ name: 'author_id', type: 'uuid' })
  authorId: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'resolved_at', type: 'timestamptz', nullable: true })
  resolvedAt: Date | null;

  @Column({ name: 'resolved_by', type: 'uuid', nullable: true })
  resolvedBy: string | null;
}

// Read and written through a WorkspaceScope only (the repositories of this folder).
registerWorkspaceOwned(SharedFileEntity);
registerWorkspaceOwned(SharedFileBranchEntity);
registerWorkspaceOwned(SharedFileLockEntity);
registerWorkspaceOwned(SharedFileCommentEntity);
registerWorkspaceOwned(SharedFileConflictEntity);

export const sharedFileEntities = [
  SharedFileEntity,
  SharedFileBranchEntity,
  SharedFileLockEntity,
  SharedFileCommentEntity,
  SharedFileConflictEntity,
];
