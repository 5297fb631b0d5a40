import type {
  CreateTaskRequest,
  DesignReviewList,
  StatusCounts,
  Task,
  TaskList,
  TimelineEntry,
  UpdateTaskRequest,
  WorkspaceReviewsQuery,
  WorkspaceStats,
  WorkspaceTasksQuery,
} from '@hwp/contracts';
import { type Bus, ForbiddenError, NotFoundError, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { FileEvents } from '../shared-files/file-guards';
import { parsePath, pathOf } from '../shared-files/file-paths';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { checkTaskMove } from './review-flow';
import { memberByEmail, notifyByEmail, type ReviewsService } from './reviews.service';

interface TaskRow {
  id: string;
  path: string;
  title: string;
  description: string;
  owner_email: string | null;
  owner_id: string | null;
  owner: string | null;
  due_at: Date | null;
  status: Task['status'];
  sort_index: number;
  created_by: string;
  created_by_name: string;
  created_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT t.*, ou.username AS owner, cu.username AS created_by_name
  FROM tasks t LEFT JOIN collab_users ou ON ou.id = t.owner_id JOIN collab_users cu ON cu.id = t.created_by`;
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const FINISHED = "('completed', 'done', 'canceled')";

/**
 * Tasks on a path (soft deleted), and the workspace's analytics: counts by status in one grouped
 * query per table, and the newest reviews and tasks by status.
 */
export class TasksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: FileEvents,
    private readonly bus: Bus,
    private readonly reviews: ReviewsService,
  ) {}

  private present(access: WorkspaceScope, r: TaskRow): Task {
    return {
      id: r.id,
      workspace: access.name,
      path: r.path,
      title: r.title,
      description: r.description,
      ownerEmail: r.owner_email,
      owner: r.owner,
      dueAt: iso(r.due_at),
      status: r.status,
      sortIndex: r.sort_index,
      createdBy: r.created_by_name,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    };
  }

  private async row(
    manager: EntityManager,
    access: WorkspaceScope,
    id: string,
    lock = false,
  ): Promise<TaskRow> {
    const [row]: TaskRow[] = await manager.query(
      `${SELECT} WHERE t.workspace_id = $1 AND t.id = $2 AND t.deleted_at IS NULL ${lock ? 'FOR UPDATE OF t' : ''}`,
      [access.id, id],
    );
    if (!row) throw new NotFoundError('No such task in the workspace');
    return row;
  }

  async list(access: WorkspaceScope, path: string): Promise<TaskList> {
    const rows: TaskRow[] = await this.dataSource.query(
      `${SELECT} WHERE t.workspace_id = $1 AND t.path = $2 AND t.deleted_at IS NULL ORDER BY t.sort_index, t.created_at, t.id`,
      [access.id, pathOf(parsePath(path))],
    );
    return { items: rows.map((r) => this.present(access, r)) };
  }

  /** The path's tasks as timeline entries (deleted ones leave it, as they leave every list). */
  async timeline(access: WorkspaceScope, path: string): Promise<TimelineEntry[]> {
    const rows: TaskRow[] = await this.dataSource.query(
      `${SELECT} WHERE t.workspace_id = $1 AND t.path = $2 AND t.deleted_at IS NULL`,
      [access.id, path],
    );
    return rows.map((r) => ({
      type: 'task',
      id: r.id,
      at: r.created_at.toISOString(),
      author: r.created_by_name,
      text: r.title,
    }));
  }

  private async owner(manager: EntityManager, access: WorkspaceScope, email: string) {
    const found = await memberByEmail(manager, access, email);
    if (!found?.id) {
      throw new ValidationError(`${email} is not a member of ${access.name}`, [
        { field: 'ownerEmail', message: 'not a member' },
      ]);
    }
    return found as { id: string; email: string; username: string };
  }

  async create(actor: CollabUserEntity, access: WorkspaceScope, request: CreateTaskRequest): Promise<Task> {
    const path = pathOf(parsePath(request.path));
    return this.dataSource.transaction(async (manager) => {
      const owner = request.ownerEmail ? await this.owner(manager, access, request.ownerEmail) : null;
      const id = newId();
      await manager.query(
        `INSERT INTO tasks (id, workspace_id, path, title, description, owner_email, owner_id, due_at, status, sort_index, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
           coalesce($10, (SELECT coalesce(max(sort_index) + 1, 0) FROM tasks WHERE workspace_id = $2 AND path = $3)), $11)`,
        [
          id,
          access.id,
          path,
          request.title,
          request.description ?? '',
          owner?.email ?? null,
          owner?.id ?? null,
          request.dueAt ?? null,
          request.status ?? 'open',
          request.sortIndex ?? null,
          actor.id,
        ],
      );
      const task = this.present(access, await this.row(manager, access, id));
      if (owner && owner.id !== actor.id) await this.assigned(manager, access, actor, task, owner.email);
      await this.events.emit(manager, access.ref, 'task', { action: 'created', task }, { actor, path });
      return task;
    });
  }

  /** Creator, owner or manager+; status by the task machine. */
  async update(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    id: string,
    request: UpdateTaskRequest,
  ): Promise<Task> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.row(manager, access, id, true);
      if (row.created_by !== actor.id && row.owner_id !== actor.id && !atLeast(access.role, 'manager'))
        throw new ForbiddenError('Only the task’s creator, its owner or a manager changes it');
      if (request.status) checkTaskMove(row.status, request.status);
      const owner = request.ownerEmail ? await this.owner(manager, access, request.ownerEmail) : null;
      const clearOwner = request.ownerEmail === null;
      await manager.query(
        `UPDATE tasks SET status = coalesce($3, status), title = coalesce($4, title), description = coalesce($5, description),
           owner_email = CASE WHEN $6 THEN NULL WHEN $7::text IS NULL THEN owner_email ELSE $7 END,
           owner_id = CASE WHEN $6 THEN NULL WHEN $7::text IS NULL THEN owner_id ELSE $8::uuid END,
           due_at = CASE WHEN $9 THEN $10::timestamptz ELSE due_at END,
           due_notified_at = CASE WHEN $9 AND $10::timestamptz IS DISTINCT FROM due_at THEN NULL ELSE due_notified_at END,
           sort_index = coalesce($11, sort_index), updated_at = now()
         WHERE workspace_id = $1 AND id = $2`,
        [
          access.id,
          id,
          request.status ?? null,
          request.title ?? null,
          request.description ?? null,
          clearOwner,
          owner?.email ?? null,
          owner?.id ?? null,
          request.dueAt !== undefined,
          request.dueAt ?? null,
          request.sortIndex ?? null,
        ],
      );
      const task = this.present(access, await this.row(manager, access, id));
      if (owner && owner.id !== row.owner_id && owner.id !== actor.id)
        await this.assigned(manager, access, actor, task, owner.email);
      await this.events.emit(
        manager,
        access.ref,
        'task',
        { action: 'updated', task },
        { actor, path: task.path },
      );
      return task;
    });
  }

  /** Creator or manager+: the task leaves lists and stats (the row stays, marked deleted). */
  async remove(actor: CollabUserEntity, access: WorkspaceScope, id: string): Promise<Task> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.row(manager, access, id, true);
      if (row.created_by !== actor.id && !atLeast(access.role, 'manager'))
        throw new ForbiddenError('Only the task’s creator or a manager deletes it');
      await manager.query('UPDATE tasks SET deleted_at = now(), updated_at = now() WHERE id = $1', [id]);
      const task = this.present(access, row);
      await this.events.emit(
        manager,
        access.ref,
        'task',
        { action: 'deleted', taskId: id },
        { actor, path: row.path },
      );
      return task;
    });
  }

  private async assigned(
    manager: EntityManager,
    access: WorkspaceScope,
    actor: CollabUserEntity,
    task: Task,
    email: string,
  ) {
    await notifyByEmail(this.bus, manager, access, actor, {
      channel: 'email',
      to: email,
      template: 'task.assigned',
      subject: `${actor.username} assigned you "${task.title}"`,
      text: `${actor.username} assigned you the task "${task.title}" on ${task.path} in the workspace "${access.name}".${task.dueAt ? `\nDue: ${task.dueAt}` : ''}`,
      vars: { workspace: access.name, path: task.path, taskId: task.id },
    });
  }

  /** Counts by status: one grouped query per table (reviews, tasks, review tasks). */
  async stats(access: WorkspaceScope): Promise<WorkspaceStats> {
    const count = async (sql: string): Promise<StatusCounts> => {
      const rows: { status: string; count: number; overdue: number }[] = await this.dataSource.query(sql, [
        access.id,
      ]);
      const counts: StatusCounts = {
        open: 0,
        in_review: 0,
        in_progress: 0,
        completed: 0,
        done: 0,
        canceled: 0,
        total: 0,
        overdue: 0,
      };
      for (const r of rows) {
        counts[r.status as keyof StatusCounts] = r.count;
        counts.total += r.count;
        counts.overdue += r.overdue;
      }
      return counts;
    };
    const grouped = (from: string) =>
      `SELECT status, count(*)::int AS count,
              count(*) FILTER (WHERE due_at < now() AND status NOT IN ${FINISHED})::int AS overdue
         FROM ${from} GROUP BY status`;
    // Three grouped queries at once, on three pooled connections.
    const [reviews, tasks, reviewTasks] = await Promise.all([
      count(grouped('design_reviews WHERE workspace_id = $1')),
      count(grouped('tasks WHERE workspace_id = $1 AND deleted_at IS NULL')),
      count(
        grouped(
          'review_tasks rt WHERE rt.review_id IN (SELECT r.id FROM design_reviews r WHERE r.workspace_id = $1)',
        ),
      ),
    ]);
    return { workspace: access.name, reviews, tasks, reviewTasks };
  }

  async recentReviews(access: WorkspaceScope, query: WorkspaceReviewsQuery): Promise<DesignReviewList> {
    const manager = this.dataSource.manager;
    const status = query.status && query.status !== 'all' ? query.status : null;
    const rows = await manager.query(
      `SELECT r.*, ru.username AS reviewer, cu.username AS created_by_name
         FROM design_reviews r LEFT JOIN collab_users ru ON ru.id = r.reviewer_id JOIN collab_users cu ON cu.id = r.created_by
        WHERE r.workspace_id = $1 AND ($2::text IS NULL OR r.status = $2) ORDER BY r.created_at DESC, r.id DESC LIMIT $3`,
      [access.id, status, query.limit ?? 50],
    );
    return { items: await this.reviews.presentAll(manager, access, rows) };
  }

  async recentTasks(access: WorkspaceScope, query: WorkspaceTasksQuery): Promise<TaskList> {
    const status = query.status && query.status !== 'all' ? query.status : null;
    const rows: TaskRow[] = await this.dataSource.query(
      `${SELECT} WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND ($2::text IS NULL OR t.status = $2)
        ORDER BY t.created_at DESC, t.id DESC LIMIT $3`,
      [access.id, status, query.limit ?? 50],
    );
    return { items: rows.map((r) => this.present(access, r)) };
  }
}
