import type { TaskStatus } from '@hwp/contracts';
import { entityRows, NotFoundError } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { TaskEntity } from './review.entity';
import type { DueItem } from './reviews.repository';

/** A task with its owner's username and its creator's. */
export type TaskRow = TaskEntity & { owner: string | null; createdByName: string };

/** Rows of one status: how many, and how many of them overdue. */
export interface StatusCountRow {
  status: string;
  count: number;
  overdue: number;
}

type Row = Record<string, unknown>;

const SELECT = `SELECT t.*, ou.username AS owner, cu.username AS created_by_name
  FROM tasks t LEFT JOIN collab_users ou ON ou.id = t.owner_id JOIN collab_users cu ON cu.id = t.created_by`;
const FINISHED = "('completed', 'done', 'canceled')";

/** A task's new values: null leaves a field; `dueAt` undefined leaves the due date, null clears it. */
export interface TaskChange {
  status: TaskStatus | null;
  title: string | null;
  description: string | null;
  /** null: the owner stays; 'clear': none; else the new owner. */
  owner: { id: string; email: string } | 'clear' | null;
  dueAt: string | null | undefined;
  sortIndex: number | null;
}

/**
 * The tasks of one workspace (deleted ones stay, marked, and leave every read here) and the
 * workspace's counts by status. Every statement names `workspace_id = scope.id`: they join usernames,
 * lock, or compute in SQL (the next sort index, a due date the client sent as text).
 */
export class TasksRepository {
  constructor(readonly scope: WorkspaceScope) {}

  private get manager() {
    return this.scope.manager;
  }

  private rows(rows: Row[]): TaskRow[] {
    const entity = entityRows(this.manager.connection, TaskEntity);
    return rows.map((row) =>
      Object.assign(entity(row), {
        owner: row.owner as string | null,
        createdByName: row.created_by_name as string,
      }),
    );
  }

  /** The task, in this workspace only and not deleted (else 404); `lock` holds it until commit. */
  async find(id: string, lock = false): Promise<TaskRow> {
    const [row] = this.rows(
      await this.manager.query(
        `${SELECT} WHERE t.workspace_id = $1 AND t.id = $2 AND t.deleted_at IS NULL ${lock ? 'FOR UPDATE OF t' : ''}`,
        [this.scope.id, id],
      ),
    );
    if (!row) throw new NotFoundError('No such task in the workspace');
    return row;
  }

  /** The path's tasks in their order. */
  async onPath(path: string): Promise<TaskRow[]> {
    return this.rows(
      await this.manager.query(
        `${SELECT} WHERE t.workspace_id = $1 AND t.path = $2 AND t.deleted_at IS NULL ORDER BY t.sort_index, t.created_at, t.id`,
        [this.scope.id, path],
      ),
    );
  }

  /** The path's tasks, unordered (the timeline sorts its entries). */
  async forTimeline(path: string): Promise<TaskRow[]> {
    return this.rows(
      await this.manager.query(
        `${SELECT} WHERE t.workspace_id = $1 AND t.path = $2 AND t.deleted_at IS NULL`,
        [this.scope.id, path],
      ),
    );
  }

  /** The newest tasks, of one status or all (null). */
  async recent(status: string | null, limit: number): Promise<TaskRow[]> {
    return this.rows(
      await this.manager.query(
        `${SELECT} WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND ($2::text IS NULL OR t.status = $2)
          ORDER BY t.created_at DESC, t.id DESC LIMIT $3`,
        [this.scope.id, status, limit],
      ),
    );
  }

  /** A task; without a sort index, after the path's last one. */
  async insert(task: {
    id: string;
    path: string;
    title: string;
    description: string;
    owner: { id: string; email: string } | null;
    dueAt: string | null;
    status: TaskStatus;
    sortIndex: number | null;
    createdBy: string;
  }): Promise<void> {
    await this.manager.query(
      `INSERT INTO tasks (id, workspace_id, path, title, description, owner_email, owner_id, due_at, status, sort_index, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
         coalesce($10, (SELECT coalesce(max(sort_index) + 1, 0) FROM tasks WHERE workspace_id = $2 AND path = $3)), $11)`,
      [
        task.id,
        this.scope.id,
        task.path,
        task.title,
        task.description,
        task.owner?.email ?? null,
        task.owner?.id ?? null,
        task.dueAt,
        task.status,
        task.sortIndex,
        task.createdBy,
      ],
    );
  }

  /** The change (a new due date clears the due-soon mark). */
  async update(task: TaskEntity, change: TaskChange): Promise<void> {
    const owner = change.owner === 'clear' ? null : change.owner;
    await this.manager.query(
      `UPDATE tasks SET status = coalesce($3, status), title = coalesce($4, title), description = coalesce($5, description),
         owner_email = CASE WHEN $6 THEN NULL WHEN $7::text IS NULL THEN owner_email ELSE $7 END,
         owner_id = CASE WHEN $6 THEN NULL WHEN $7::text IS NULL THEN owner_id ELSE $8::uuid END,
         due_at = CASE WHEN $9 THEN $10::timestamptz ELSE due_at END,
         due_notified_at = CASE WHEN $9 AND $10::timestamptz IS DISTINCT FROM due_at THEN NULL ELSE due_notified_at END,
         sort_index = coalesce($11, sort_index), updated_at = now()
       WHERE workspace_id = $1 AND id = $2`,
      [
        this.scope.id,
        task.id,
        change.status,
        change.title,
        change.description,
        change.owner === 'clear',
        owner?.email ?? null,
        owner?.id ?? null,
        change.dueAt !== undefined,
        change.dueAt ?? null,
        change.sortIndex,
      ],
    );
  }

  /** Marks the task deleted: it leaves lists and counts, the row stays. */
  async softDelete(task: TaskEntity): Promise<void> {
    await this.manager.query(
      'UPDATE tasks SET deleted_at = now(), updated_at = now() WHERE workspace_id = $1 AND id = $2',
      [this.scope.id, task.id],
    );
  }

  /**
   * Counts by status and overdue of the workspace's reviews, tasks and review tasks: one grouped
   * query per table, the three at once on three pooled connections (outside a transaction).
   */
  async countsByStatus(): Promise<{
    reviews: StatusCountRow[];
    tasks: StatusCountRow[];
    reviewTasks: StatusCountRow[];
  }> {
    const grouped = (from: string): Promise<StatusCountRow[]> =>
      this.manager.query(
        `SELECT status, count(*)::int AS count,
                count(*) FILTER (WHERE due_at < now() AND status NOT IN ${FINISHED})::int AS overdue
           FROM ${from} GROUP BY status`,
        [this.scope.id],
      );
    const [reviews, tasks, reviewTasks] = await Promise.all([
      grouped('design_reviews WHERE workspace_id = $1'),
      grouped('tasks WHERE workspace_id = $1 AND deleted_at IS NULL'),
      grouped(
        'review_tasks rt WHERE rt.review_id IN (SELECT r.id FROM design_reviews r WHERE r.workspace_id = $1)',
      ),
    ]);
    return { reviews, tasks, reviewTasks };
  }
}

/**
 * Unscoped, for the due-soon sweep only (due-soon.ts): open tasks of every workspace due within
 * `withinHours` and not yet noticed (to the owner, else the creator), marked noticed in the caller's
 * transaction. Rows another transaction holds are skipped (the next scan takes them).
 */
export async function dueTasksAcrossWorkspaces(
  manager: EntityManager,
  withinHours: number,
  batch: number,
): Promise<DueItem[]> {
  const rows: DueItem[] = await manager.query(
    `SELECT t.id, t.workspace_id, w.name AS workspace, t.path, t.title, t.due_at,
            coalesce(ou.email, cu.email) AS to_email
       FROM tasks t JOIN workspaces w ON w.id = t.workspace_id JOIN collab_users cu ON cu.id = t.created_by
       LEFT JOIN collab_users ou ON ou.id = t.owner_id
      WHERE t.due_at IS NOT NULL AND t.due_notified_at IS NULL AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress')
        AND t.due_at > now() AND t.due_at <= now() + make_interval(hours => $1)
      ORDER BY t.due_at LIMIT ${batch} FOR UPDATE OF t SKIP LOCKED`,
    [withinHours],
  );
  if (rows.length > 0) {
    await manager.query('UPDATE tasks SET due_notified_at = now() WHERE id = ANY($1::uuid[])', [
      rows.map((r) => r.id),
    ]);
  }
  return rows;
}
