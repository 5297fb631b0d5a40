import {
  type CreateReviewRequest,
  type CreateReviewTaskRequest,
  type CreateReviewTemplateRequest,
  type DesignReview,
  type DesignReviewList,
  type NotificationRequestedData,
  type ReviewTask,
  type ReviewTemplate,
  type ReviewTemplateList,
  RoutingKeys,
  type UpdateReviewRequest,
} from '@hwp/contracts';
import {
  type Bus,
  ConflictError,
  currentContext,
  ForbiddenError,
  NotFoundError,
  newId,
  queryRows,
  ValidationError,
} from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { FileEvents } from '../shared-files/file-guards';
import { parsePath, pathOf } from '../shared-files/file-paths';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { checkReviewMove, checkTaskMove, isReopen } from './review-flow';

interface ReviewRow {
  id: string;
  path: string;
  version_id: string | null;
  reviewer_email: string;
  reviewer_id: string | null;
  reviewer: string | null;
  message: string;
  due_at: Date | null;
  status: DesignReview['status'];
  template_id: string | null;
  created_by: string;
  created_by_name: string;
  created_at: Date;
  updated_at: Date;
}

interface ReviewTaskRow {
  id: string;
  review_id: string;
  title: string;
  description: string;
  status: ReviewTask['status'];
  due_at: Date | null;
  sort_index: number;
  created_by_name: string;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const REVIEW_SELECT = `SELECT r.*, ru.username AS reviewer, cu.username AS created_by_name
  FROM design_reviews r LEFT JOIN collab_users ru ON ru.id = r.reviewer_id JOIN collab_users cu ON cu.id = r.created_by`;
const TASK_SELECT = `SELECT t.*, cu.username AS created_by_name FROM review_tasks t JOIN collab_users cu ON cu.id = t.created_by`;

/** Someone a workspace item can name by email: a member (with their id), or an invited address. */
export async function memberByEmail(
  manager: EntityManager,
  access: WorkspaceScope,
  email: string,
): Promise<{ id: string | null; email: string; username: string | null } | null> {
  const [member]: { id: string; email: string; username: string }[] = await manager.query(
    `SELECT u.id, u.email, u.username FROM workspace_members m JOIN collab_users u ON u.id = m.user_id
      WHERE m.workspace_id = $1 AND lower(u.email) = lower($2) LIMIT 1`,
    [access.id, email],
  );
  if (member) return member;
  const invited: unknown[] = await manager.query(
    `SELECT 1 FROM invitations WHERE workspace_id = $1 AND lower(email) = lower($2) AND status = 'pending' LIMIT 1`,
    [access.id, email],
  );
  return invited.length > 0 ? { id: null, email: email.toLowerCase(), username: null } : null;
}

/** A reviewer: a member or an invited address (400 otherwise). */
async function reviewerOf(manager: EntityManager, access: WorkspaceScope, email: string) {
  const reviewer = await memberByEmail(manager, access, email);
  if (!reviewer) {
    throw new ValidationError(`${email} is not a member of ${access.name}, nor invited to it`, [
      { field: 'reviewerEmail', message: 'not a member or invited' },
    ]);
  }
  return reviewer;
}

/** An email through the API host's notifier (outbox, in the caller's transaction); `system` for scheduled ones. */
export async function notifyByEmail(
  bus: Bus,
  manager: EntityManager,
  workspace: { name: string },
  actor: { id: string } | 'system',
  data: NotificationRequestedData,
): Promise<void> {
  await bus.outbox.add(manager, {
    type: RoutingKeys.notificationRequested,
    workspace: workspace.name,
    actor: actor === 'system' ? 'system' : actor.id,
    correlationId: currentContext()?.requestId,
    data,
  });
}

/**
 * Design reviews of a path (a file or a file version), with their tasks and the state machine of
 * DECISIONS.md 5, and the workspace's review templates. Every change is a `review` event; a review
 * request emails the reviewer.
 */
export class ReviewsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: FileEvents,
    private readonly bus: Bus,
  ) {}

  private async tasksOf(manager: EntityManager, reviewIds: string[]): Promise<Map<string, ReviewTask[]>> {
    const rows: ReviewTaskRow[] = reviewIds.length
      ? await manager.query(
          `${TASK_SELECT} WHERE t.review_id = ANY($1::uuid[]) ORDER BY t.sort_index, t.id`,
          [reviewIds],
        )
      : [];
    const byReview = new Map<string, ReviewTask[]>();
    for (const row of rows) {
      const list = byReview.get(row.review_id) ?? [];
      list.push(presentTask(row));
      byReview.set(row.review_id, list);
    }
    return byReview;
  }

  async presentAll(
    manager: EntityManager,
    access: WorkspaceScope,
    rows: ReviewRow[],
  ): Promise<DesignReview[]> {
    const tasks = await this.tasksOf(
      manager,
      rows.map((r) => r.id),
    );
    return rows.map((r) => ({
      id: r.id,
      workspace: access.name,
      path: r.path,
      versionId: r.version_id,
      reviewerEmail: r.reviewer_email,
      reviewer: r.reviewer,
      message: r.message,
      dueAt: iso(r.due_at),
      status: r.status,
      templateId: r.template_id,
      createdBy: r.created_by_name,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
      tasks: tasks.get(r.id) ?? [],
    }));
  }

  private async row(
    manager: EntityManager,
    access: WorkspaceScope,
    id: string,
    lock = false,
  ): Promise<ReviewRow> {
    const [row]: ReviewRow[] = await manager.query(
      `${REVIEW_SELECT} WHERE r.workspace_id = $1 AND r.id = $2 ${lock ? 'FOR UPDATE OF r' : ''}`,
      [access.id, id],
    );
    if (!row) throw new NotFoundError('No such review in the workspace');
    return row;
  }

  async list(access: WorkspaceScope, path: string): Promise<DesignReviewList> {
    const manager = this.dataSource.manager;
    const rows: ReviewRow[] = await manager.query(
      `${REVIEW_SELECT} WHERE r.workspace_id = $1 AND r.path = $2 ORDER BY r.created_at DESC, r.id DESC`,
      [access.id, pathOf(parsePath(path))],
    );
    return { items: await this.presentAll(manager, access, rows) };
  }

  /** Engineer+: a review of a path, from a template when `templateId` (its checklist becomes the tasks). */
  async create(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    request: CreateReviewRequest,
  ): Promise<DesignReview> {
    const path = pathOf(parsePath(request.path));
    return this.dataSource.transaction(async (manager) => {
      const reviewer = await reviewerOf(manager, access, request.reviewerEmail);
      if (request.versionId) {
        const target = parsePath(path);
        const found: unknown[] = await manager.query(
          `SELECT 1 FROM shared_file_versions v JOIN shared_files f ON f.id = v.file_id
            WHERE f.workspace_id = $1 AND f.username = $2 AND f.filename = $3 AND v.id = $4`,
          [access.id, target.username, target.filename, request.versionId],
        );
        if (found.length === 0) throw new NotFoundError(`No version ${request.versionId} of ${path}`);
      }
      let checklist: string[] = [];
      let message = request.message ?? '';
      if (request.templateId) {
        const [template]: { checklist: string[]; message: string }[] = await manager.query(
          'SELECT checklist, message FROM review_templates WHERE workspace_id = $1 AND id = $2',
          [access.id, request.templateId],
        );
        if (!template) throw new NotFoundError('No such review template in the workspace');
        checklist = template.checklist;
        message ||= template.message;
      }
      const id = newId();
      await manager.query(
        `INSERT INTO design_reviews (id, workspace_id, path, version_id, reviewer_email, reviewer_id, message, due_at, template_id, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          id,
          access.id,
          path,
          request.versionId ?? null,
          reviewer.email,
          reviewer.id,
          message,
          request.dueAt ?? null,
          request.templateId ?? null,
          actor.id,
        ],
      );
      for (const [index, title] of checklist.entries()) {
        await manager.query(
          'INSERT INTO review_tasks (id, review_id, title, sort_index, created_by) VALUES ($1, $2, $3, $4, $5)',
          [newId(), id, title, index, actor.id],
        );
      }
      const [review] = await this.presentAll(manager, access, [await this.row(manager, access, id)]);
      await notifyByEmail(this.bus, manager, access, actor, {
        channel: 'email',
        to: reviewer.email,
        template: 'review.requested',
        subject: `${actor.username} asks you to review ${path}`,
        text: [
          `${actor.username} asks you to review ${path} in the workspace "${access.name}".`,
          message && `\n${message}`,
          review.dueAt && `\nDue: ${review.dueAt}`,
        ]
          .filter(Boolean)
          .join('\n'),
        vars: { workspace: access.name, path, reviewId: id },
      });
      await this.emit(manager, access, actor, review, 'created');
      return review;
    });
  }

  /** Status by the state machine (reopening needs manager+), reviewer and due date; creator, reviewer or manager+. */
  async update(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    id: string,
    request: UpdateReviewRequest,
  ): Promise<DesignReview> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.row(manager, access, id, true);
      this.assertReviewParty(actor, access, row);
      if (request.status && request.status !== row.status) {
        checkReviewMove(row.status, request.status);
        if (isReopen(row.status, request.status) && !atLeast(access.role, 'manager'))
          throw new ForbiddenError('Reopening a review needs the manager role or higher');
      }
      const reviewer = request.reviewerEmail
        ? await reviewerOf(manager, access, request.reviewerEmail)
        : null;
      await manager.query(
        `UPDATE design_reviews SET status = coalesce($3, status),
           reviewer_email = coalesce($4, reviewer_email), reviewer_id = CASE WHEN $4::text IS NULL THEN reviewer_id ELSE $5::uuid END,
           due_at = CASE WHEN $6 THEN $7::timestamptz ELSE due_at END,
           due_notified_at = CASE WHEN $6 AND $7::timestamptz IS DISTINCT FROM due_at THEN NULL ELSE due_notified_at END,
           updated_at = now()
         WHERE workspace_id = $1 AND id = $2`,
        [
          access.id,
          id,
          request.status ?? null,
          reviewer?.email ?? null,
          reviewer?.id ?? null,
          request.dueAt !== undefined,
          request.dueAt ?? null,
        ],
      );
      const [review] = await this.presentAll(manager, access, [await this.row(manager, access, id)]);
      await this.emit(
        manager,
        access,
        actor,
        review,
        request.status && request.status !== row.status ? `status.${request.status}` : 'updated',
      );
      return review;
    });
  }

  /** Reviewer or manager+. */
  async addTask(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    id: string,
    request: CreateReviewTaskRequest,
  ): Promise<ReviewTask> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.row(manager, access, id, true);
      this.assertReviewerOrManager(actor, access, row);
      const taskId = newId();
      await manager.query(
        `INSERT INTO review_tasks (id, review_id, title, description, due_at, sort_index, created_by)
         VALUES ($1, $2, $3, $4, $5, (SELECT coalesce(max(sort_index) + 1, 0) FROM review_tasks WHERE review_id = $2), $6)`,
        [taskId, id, request.title, request.description ?? '', request.dueAt ?? null, actor.id],
      );
      const [task]: ReviewTaskRow[] = await manager.query(`${TASK_SELECT} WHERE t.id = $1`, [taskId]);
      await this.events.emit(
        manager,
        access.ref,
        'review',
        { action: 'task.created', reviewId: id, task: presentTask(task) },
        { actor, path: row.path },
      );
      return presentTask(task);
    });
  }

  /** Reviewer or manager+: a review task's status by the task machine. */
  async moveTask(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    id: string,
    taskId: string,
    status: ReviewTask['status'],
  ): Promise<ReviewTask> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.row(manager, access, id, true);
      this.assertReviewerOrManager(actor, access, row);
      const [task]: ReviewTaskRow[] = await manager.query(
        `${TASK_SELECT} WHERE t.review_id = $1 AND t.id = $2`,
        [id, taskId],
      );
      if (!task) throw new NotFoundError('No such task in the review');
      checkTaskMove(task.status, status);
      await manager.query('UPDATE review_tasks SET status = $2, updated_at = now() WHERE id = $1', [
        taskId,
        status,
      ]);
      const [moved]: ReviewTaskRow[] = await manager.query(`${TASK_SELECT} WHERE t.id = $1`, [taskId]);
      await this.events.emit(
        manager,
        access.ref,
        'review',
        { action: 'task.updated', reviewId: id, task: presentTask(moved) },
        { actor, path: row.path },
      );
      return presentTask(moved);
    });
  }

  private assertReviewParty(actor: CollabUserEntity, access: WorkspaceScope, row: ReviewRow): void {
    if (row.created_by === actor.id || row.reviewer_id === actor.id || atLeast(access.role, 'manager'))
      return;
    if (row.reviewer_email.toLowerCase() === actor.email.toLowerCase()) return;
    throw new ForbiddenError('Only the review’s creator, its reviewer or a manager changes it');
  }

  private assertReviewerOrManager(actor: CollabUserEntity, access: WorkspaceScope, row: ReviewRow): void {
    if (row.reviewer_id === actor.id || row.reviewer_email.toLowerCase() === actor.email.toLowerCase())
      return;
    if (atLeast(access.role, 'manager')) return;
    throw new ForbiddenError('Only the reviewer or a manager handles the review’s tasks');
  }

  private async emit(
    manager: EntityManager,
    access: WorkspaceScope,
    actor: CollabUserEntity,
    review: DesignReview,
    action: string,
  ) {
    await this.events.emit(
      manager,
      access.ref,
      'review',
      { action, reviewId: review.id, status: review.status, reviewer: review.reviewerEmail },
      { actor, path: review.path },
    );
  }

  async templates(access: WorkspaceScope): Promise<ReviewTemplateList> {
    const rows: {
      id: string;
      name: string;
      message: string;
      checklist: string[];
      created_by_name: string;
      created_at: Date;
    }[] = await this.dataSource.query(
      `SELECT t.*, u.username AS created_by_name FROM review_templates t JOIN collab_users u ON u.id = t.created_by
          WHERE t.workspace_id = $1 ORDER BY lower(t.name)`,
      [access.id],
    );
    return {
      items: rows.map((r) => ({
        id: r.id,
        name: r.name,
        message: r.message,
        checklist: r.checklist,
        createdBy: r.created_by_name,
        createdAt: r.created_at.toISOString(),
      })),
    };
  }

  async createTemplate(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    request: CreateReviewTemplateRequest,
  ): Promise<ReviewTemplate> {
    const id = newId();
    const name = request.name.trim();
    try {
      await this.dataSource.query(
        'INSERT INTO review_templates (id, workspace_id, name, message, checklist, created_by) VALUES ($1, $2, $3, $4, $5, $6)',
        [
          id,
          access.id,
          name,
          request.message ?? '',
          JSON.stringify(request.checklist.map((c) => c.trim())),
          actor.id,
        ],
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw new ConflictError(`A template named ${name} exists`, { field: 'name' });
      throw error;
    }
    return (await this.templates(access)).items.find((t) => t.id === id) as ReviewTemplate;
  }

  async deleteTemplate(access: WorkspaceScope, id: string): Promise<ReviewTemplateList> {
    const gone = await queryRows(
      this.dataSource,
      'DELETE FROM review_templates WHERE workspace_id = $1 AND id = $2 RETURNING id',
      [access.id, id],
    );
    if (gone.length === 0) throw new NotFoundError('No such review template in the workspace');
    return this.templates(access);
  }
}

export function presentTask(row: ReviewTaskRow): ReviewTask {
  return {
    id: row.id,
    reviewId: row.review_id,
    title: row.title,
    description: row.description,
    status: row.status,
    dueAt: iso(row.due_at),
    sortIndex: row.sort_index,
    createdBy: row.created_by_name,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
