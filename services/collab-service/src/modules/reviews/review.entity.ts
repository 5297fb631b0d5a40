import type { ReviewStatus, TaskStatus } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { registerWorkspaceOwned, WorkspaceRow } from '../workspace-access/workspace-scope';

/**
 * The tables of migrations/1764300000000-CreateReviews (and the due-soon marks of DueSoonNotices).
 * Defaults are declared where the table has one, so an insert that leaves a column out reads it back.
 */

/** A workspace's review template: its checklist becomes a review's tasks. */
@Entity({ name: 'review_templates' })
export class ReviewTemplateEntity extends WorkspaceRow {
  @Column('text')
  name: string;

  @Column({ type: 'text', default: '' })
  message: string;

  @Column('jsonb')
  checklist: string[];

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}

/** A design review of a path (a file, or one version of it). */
@Entity({ name: 'design_reviews' })
export class DesignReviewEntity extends WorkspaceRow {
  @Column('text')
  path: string;

  @Column({ name: 'version_id', type: 'uuid', nullable: true })
  versionId: string | null;

  @Column({ name: 'reviewer_email', type: 'text' })
  reviewerEmail: string;

  /** Null while the reviewer is an invited address, not yet a member. */
  @Column({ name: 'reviewer_id', type: 'uuid', nullable: true })
  reviewerId: string | null;

  @Column({ type: 'text', default: '' })
  message: string;

  @Column({ name: 'due_at', type: 'timestamptz', nullable: true })
  dueAt: Date | null;

  @Column({ type: 'text', default: 'open' })
  status: ReviewStatus;

  @Column({ name: 'template_id', type: 'uuid', nullable: true })
  templateId: string | null;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  /** When the due-soon notice went out (a new due date clears it). */
  @Column({ name: 'due_notified_at', type: 'timestamptz', nullable: true })
  dueNotifiedAt: Date | null;
}

/** A task of a review (no workspace of its own: reached through a review found in the workspace). */
@Entity({ name: 'review_tasks' })
export class ReviewTaskEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'review_id', type: 'uuid' })
  reviewId: string;

  @Column('text')
  title: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text', default: 'open' })
  status: TaskStatus;

  @Column({ name: 'due_at', type: 'timestamptz', nullable: true })
  dueAt: Date | null;

  @Column({ name: 'sort_index', type: 'integer', default: 0 })
  sortIndex: number;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/** A task on a path; deleting one marks it (`deleted_at`), and it leaves every list and count. */
@Entity({ name: 'tasks' })
export class TaskEntity extends WorkspaceRow {
  @Column('text')
  path: string;

  @Column('text')
  title: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'owner_email', type: 'text', nullable: true })
  ownerEmail: string | null;

  @Column({ name: 'owner_id', type: 'uuid', nullable: true })
  ownerId: string | null;

  @Column({ name: 'due_at', type: 'timestamptz', nullable: true })
  dueAt: Date | null;

  @Column({ type: 'text', default: 'open' })
  status: TaskStatus;

  @Column({ name: 'sort_index', type: 'integer', default: 0 })
  sortIndex: number;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  @Column({ name: 'due_notified_at', type: 'timestamptz', nullable: true })
  dueNotifiedAt: Date | null;
}

// Read and written through a WorkspaceScope only (review tasks through a review found there).
registerWorkspaceOwned(ReviewTemplateEntity);
registerWorkspaceOwned(DesignReviewEntity);
registerWorkspaceOwned(TaskEntity);

export const reviewEntities = [ReviewTemplateEntity, DesignReviewEntity, ReviewTaskEntity, TaskEntity];
