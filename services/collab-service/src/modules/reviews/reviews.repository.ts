import type { ReviewStatus, TaskStatus } from '@hwp/contracts';
import { entityRows, NotFoundError, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { DesignReviewEntity, ReviewTaskEntity, ReviewTemplateEntity } from './review.entity';

/** A review with its reviewer's username (null for an invited address) and its creator's. */
export type ReviewRow = DesignReviewEntity & { reviewer: string | null; createdByName: string };
/** A review task with its creator's username. */
export type ReviewTaskRow = ReviewTaskEntity & { createdByName: string };
/** A review template with its creator's username. */
export type ReviewTemplateRow = ReviewTemplateEntity & { createdByName: string };

type Row = Record<string, unknown>;

const REVIEW_SELECT = `SELECT r.*, ru.username AS reviewer, cu.username AS created_by_name
  FROM design_reviews r LEFT JOIN collab_users ru ON ru.id = r.reviewer_id JOIN collab_users cu ON cu.id = r.created_by`;
const TASK_SELECT = `SELECT t.*, cu.username AS created_by_name FROM review_tasks t JOIN collab_users cu ON cu.id = t.created_by`;

/** A review's new values; `dueAt` undefined leaves the due date, null clears it. */
export interface ReviewChange {
  status: ReviewStatus | null;
  reviewer: { id: string | null; email: string } | null;
  dueAt: string | null | undefined;
}

/**
 * The design reviews of one workspace, their tasks and the workspace's review templates. Reviews and
 * templates are read and written in the scope's workspace only (templates through its scoped
 * repository; the statements that join usernames or lock name `workspace_id = scope.id`); review tasks
 * only through a review found there.
 */
export class ReviewsRepository {
  private readonly templates: WorkspaceScopedRepository<ReviewTemplateEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.templates = scope.repo(ReviewTemplateEntity);
  }

  private get manager() {
    return this.scope.manager;
  }

  private reviewRows(rows: Row[]): ReviewRow[] {
    const entity = entityRows(this.manager.connection, DesignReviewEntity);
    return rows.map((row) =>
      Object.assign(entity(row), {
        reviewer: row.reviewer as string | null,
        createdByName: row.created_by_name as string,
      }),
    );
  }

  private taskRows(rows: Row[]): ReviewTaskRow[] {
    const entity = entityRows(this.manager.connection, ReviewTaskEntity);
    return rows.map((row) => Object.assign(entity(row), { createdByName: row.created_by_name as string }));
  }

  /** The review, in this workspace only (else 404); `lock` holds it until the transaction ends. */
  async find(id: string, lock = false): Promise<ReviewRow> {
    const rows: Row[] = await this.manager.query(
      `${REVIEW_SELECT} WHERE r.workspace_id = $1 AND r.id = $2 ${lock ? 'FOR UPDATE OF r' : ''}`,
      [this.scope.id, id],
    );
    const [row] = this.reviewRows(rows);
    if (!row) throw new NotFoundError('No such review in the workspace');
    return row;
  }

  /** The reviews of a path, newest first. */
  async onPath(path: string): Promise<ReviewRow[]> {
    return this.reviewRows(
      await this.manager.query(
        `${REVIEW_SELECT} WHERE r.workspace_id = $1 AND r.path = $2 ORDER BY r.created_at DESC, r.id DESC`,
        [this.scope.id, path],
      ),
    );
  }

  /** The newest reviews, of one status or all (null). */
  async recent(status: string | null, limit: number): Promise<ReviewRow[]> {
    return this.reviewRows(
      await this.manager.query(
        `${REVIEW_SELECT}
          WHERE r.workspace_id = $1 AND ($2::text IS NULL OR r.status = $2) ORDER BY r.created_at DESC, r.id DESC LIMIT $3`,
        [this.scope.id, status, limit],
      ),
    );
  }

  /** Whether `versionId` is a version of the file at the path, in this workspace. */
  async hasVersion(path: { username: string; filename: string }, versionId: string): Promise<boolean> {
    const found: unknown[] = await this.manager.query(
      `SELECT 1 FROM shared_file_versions v JOIN shared_files f ON f.id = v.file_id
        WHERE f.workspace_id = $1 AND f.username = $2 AND f.filename = $3 AND v.id = $4`,
      [this.scope.id, path.username, path.filename, versionId],
    );
    return found.length > 0;
  }

  async insert(review: {
    id: string;
    path: string;
    versionId: string | null;
    reviewer: { id: string | null; email: string };
    message: string;
    dueAt: string | null;
    templateId: string | null;
    createdBy: string;
  }): Promise<void> {
    // SQL, not the scoped repository: `due_at` is the client's ISO 8601 text, read by PostgreSQL.
    await this.manager.query(
      `INSERT INTO design_reviews (id, workspace_id, path, version_id, reviewer_email, reviewer_id, message, due_at, template_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        review.id,
        this.scope.id,
        review.path,
        review.versionId,
        review.reviewer.email,
        review.reviewer.id,
        review.message,
        review.dueAt,
        review.templateId,
        review.createdBy,
      ],
    );
  }

  /** Status, reviewer and due date (a new due date clears the due-soon mark). */
  async update(review: DesignReviewEntity, change: ReviewChange): Promise<void> {
    await this.manager.query(
      `UPDATE design_reviews SET status = coalesce($3, status),
         reviewer_email = coalesce($4, reviewer_email), reviewer_id = CASE WHEN $4::text IS NULL THEN reviewer_id ELSE $5::uuid END,
         due_at = CASE WHEN $6 THEN $7::timestamptz ELSE due_at END,
         due_notified_at = CASE WHEN $6 AND $7::timestamptz IS DISTINCT FROM due_at THEN NULL ELSE due_notified_at END,
         updated_at = now()
       WHERE workspace_id = $1 AND id = $2`,
      [
        this.scope.id,
        review.id,
        change.status,
        change.reviewer?.email ?? null,
        change.reviewer?.id ?? null,
        change.dueAt !== undefined,
        change.dueAt ?? null,
      ],
    );
  }

  /** The reviews' tasks in their order, by review. */
  async tasksOf(reviews: DesignReviewEntity[]): Promise<Map<string, ReviewTaskRow[]>> {
    const rows = reviews.length
      ? this.taskRows(
          await this.manager.query(
            `${TASK_SELECT} WHERE t.review_id = ANY($1::uuid[]) ORDER BY t.sort_index, t.id`,
            [reviews.map((r) => r.id)],
          ),
        )
      : [];
    const byReview = new Map<string, ReviewTaskRow[]>();
    for (const row of rows) {
      const list = byReview.get(row.reviewId) ?? [];
      list.push(row);
      byReview.set(row.reviewId, list);
    }
    return byReview;
  }

  /** A checklist as the review's first tasks, in its order. */
  async insertChecklist(review: DesignReviewEntity, titles: string[], createdBy: string): Promise<void> {
    for (const [index, title] of titles.entries()) {
      await this.manager.query(
        'INSERT INTO review_tasks (id, review_id, title, sort_index, created_by) VALUES ($1, $2, $3, $4, $5)',
        [newId(), review.id, title, index, createdBy],
      );
    }
  }

  /** A task after the review's last one. */
  async addTask(
    review: DesignReviewEntity,
    task: { title: string; description: string; dueAt: string | null },
    createdBy: string,
  ): Promise<ReviewTaskRow> {
    const id = newId();
    await this.manager.query(
      `INSERT INTO review_tasks (id, review_id, title, description, due_at, sort_index, created_by)
       VALUES ($1, $2, $3, $4, $5, (SELECT coalesce(max(sort_index) + 1, 0) FROM review_tasks WHERE review_id = $2), $6)`,
      [id, review.id, task.title, task.description, task.dueAt, createdBy],
    );
    return this.task(review, id);
  }

  /** One task of the review (else 404). */
  async task(review: DesignReviewEntity, taskId: string): Promise<ReviewTaskRow> {
    const [task] = this.taskRows(
      await this.manager.query(`${TASK_SELECT} WHERE t.review_id = $1 AND t.id = $2`, [review.id, taskId]),
    );
    if (!task) throw new NotFoundError('No such task in the review');
    return task;
  }

  async moveTask(review: DesignReviewEntity, taskId: string, status: TaskStatus): Promise<ReviewTaskRow> {
    await this.manager.query(
      'UPDATE review_tasks SET status = $3, updated_at = now() WHERE review_id = $1 AND id = $2',
      [review.id, taskId, status],
    );
    return this.task(review, taskId);
  }

  /** The template, in this workspace only (else 404). */
  async template(id: string): Promise<ReviewTemplateEntity> {
    const template = await this.templates.findOne({ id });
    if (!template) throw new NotFoundError('No such review template in the workspace');
    return template;
  }

  /** The workspace's templates by name. */
  async listTemplates(): Promise<ReviewTemplateRow[]> {
    const entity = entityRows(this.manager.connection, ReviewTemplateEntity);
    const rows: Row[] = await this.manager.query(
      `SELECT t.*, u.username AS created_by_name FROM review_templates t JOIN collab_users u ON u.id = t.created_by
          WHERE t.workspace_id = $1 ORDER BY lower(t.name)`,
      [this.scope.id],
    );
    return rows.map((row) => Object.assign(entity(row), { createdByName: row.created_by_name as string }));
  }

  /** A new template (`created_at` from the database); a name taken in the workspace fails with 23505. */
  async insertTemplate(template: Omit<ReviewTemplateEntity, 'workspaceId' | 'createdAt'>): Promise<void> {
    await this.templates.insert(template as Omit<ReviewTemplateEntity, 'workspaceId'>);
  }

  /** Whether the workspace had the template. */
  async deleteTemplate(id: string): Promise<boolean> {
    return (await this.templates.delete({ id })) > 0;
  }
}

/** Someone a workspace item can name by email: a member (with their id), or an invited address. */
export async function memberByEmail(
  scope: WorkspaceScope,
  email: string,
): Promise<{ id: string | null; email: string; username: string | null } | null> {
  const [member]: { id: string; email: string; username: string }[] = await scope.manager.query(
    `SELECT u.id, u.email, u.username FROM workspace_members m JOIN collab_users u ON u.id = m.user_id
      WHERE m.workspace_id = $1 AND lower(u.email) = lower($2) LIMIT 1`,
    [scope.id, email],
  );
  if (member) return member;
  const invited: unknown[] = await scope.manager.query(
    `SELECT 1 FROM invitations WHERE workspace_id = $1 AND lower(email) = lower($2) AND status = 'pending' LIMIT 1`,
    [scope.id, email],
  );
  return invited.length > 0 ? { id: null, email: email.toLowerCase(), username: null } : null;
}

/** A review or task whose due-soon notice is due, with its workspace and whom to tell. */
export interface DueItem {
  id: string;
  workspace_id: string;
  workspace: string;
  path: string;
  title: string;
  due_at: Date;
  to_email: string;
}

/**
 * Unscoped, for the due-soon sweep only (due-soon.ts): open reviews of every workspace due within
 * `withinHours` and not yet noticed, marked noticed in the caller's transaction. Rows another
 * transaction holds are skipped (the next scan takes them).
 */
export async function dueReviewsAcrossWorkspaces(
  manager: EntityManager,
  withinHours: number,
  batch: number,
): Promise<DueItem[]> {
  const rows: DueItem[] = await manager.query(
    `SELECT r.id, r.workspace_id, w.name AS workspace, r.path, r.path AS title, r.due_at,
            r.reviewer_email AS to_email
       FROM design_reviews r JOIN workspaces w ON w.id = r.workspace_id
      WHERE r.due_at IS NOT NULL AND r.due_notified_at IS NULL AND r.status IN ('open', 'in_review')
        AND r.due_at > now() AND r.due_at <= now() + make_interval(hours => $1)
      ORDER BY r.due_at LIMIT ${batch} FOR UPDATE OF r SKIP LOCKED`,
    [withinHours],
  );
  if (rows.length > 0) {
    await manager.query('UPDATE design_reviews SET due_notified_at = now() WHERE id = ANY($1::uuid[])', [
      rows.map((r) => r.id),
    ]);
  }
  return rows;
}
