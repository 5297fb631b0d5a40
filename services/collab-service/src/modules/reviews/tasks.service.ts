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
import { type Bus, ForbiddenError, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { FileEvents } from '../shared-files/file-guards';
import { parsePath, pathOf } from '../shared-files/file-paths';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { checkTaskMove } from './review-flow';
import { presentTask } from './reviews.presenter';
import { memberByEmail, ReviewsRepository } from './reviews.repository';
import { notifyByEmail, type ReviewsService } from './reviews.service';
import { type StatusCountRow, TasksRepository } from './tasks.repository';

/** The counts of a table's grouped rows, every status present. */
function statusCounts(rows: StatusCountRow[]): StatusCounts {
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
}

/**
 * Tasks on a path (soft deleted), and the workspace's analytics: counts by status in one grouped
 * query per table, and the newest reviews and tasks by status. The rows: TasksRepository.
 */
export class TasksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: FileEvents,
    private readonly bus: Bus,
    private readonly reviews: ReviewsService,
  ) {}

  async list(access: WorkspaceScope, path: string): Promise<TaskList> {
    const rows = await new TasksRepository(access).onPath(pathOf(parsePath(path)));
    return { items: rows.map((r) => presentTask(access, r)) };
  }

  /** The path's tasks as timeline entries (deleted ones leave it, as they leave every list). */
  async timeline(access: WorkspaceScope, path: string): Promise<TimelineEntry[]> {
    const rows = await new TasksRepository(access).forTimeline(path);
    return rows.map((r) => ({
      type: 'task',
      id: r.id,
      at: r.createdAt.toISOString(),
      author: r.createdByName,
      text: r.title,
    }));
  }

  private async owner(scope: WorkspaceScope, email: string) {
    const found = await memberByEmail(scope, email);
    if (!found?.id) {
      throw new ValidationError(`${email} is not a member of ${scope.name}`, [
        { field: 'ownerEmail', message: 'not a member' },
      ]);
    }
    return found as { id: string; email: string; username: string };
  }

  async create(actor: CollabUserEntity, access: WorkspaceScope, request: CreateTaskRequest): Promise<Task> {
    const path = pathOf(parsePath(request.path));
    return this.dataSource.transaction(async (manager) => {
      const scope = access.in(manager);
      const repo = new TasksRepository(scope);
      const owner = request.ownerEmail ? await this.owner(scope, request.ownerEmail) : null;
      const id = newId();
      await repo.insert({
        id,
        path,
        title: request.title,
        description: request.description ?? '',
        owner,
        dueAt: request.dueAt ?? null,
        status: request.status ?? 'open',
        sortIndex: request.sortIndex ?? null,
        createdBy: actor.id,
      });
      const task = presentTask(access, await repo.find(id));
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
      const scope = access.in(manager);
      const repo = new TasksRepository(scope);
      const row = await repo.find(id, true);
      if (row.createdBy !== actor.id && row.ownerId !== actor.id && !atLeast(access.role, 'manager'))
        throw new ForbiddenError('Only the task’s creator, its owner or a manager changes it');
      if (request.status) checkTaskMove(row.status, request.status);
      const owner = request.ownerEmail ? await this.owner(scope, request.ownerEmail) : null;
      await repo.update(row, {
        status: request.status ?? null,
        title: request.title ?? null,
        description: request.description ?? null,
        owner: request.ownerEmail === null ? 'clear' : owner,
        dueAt: request.dueAt,
        sortIndex: request.sortIndex ?? null,
      });
      const task = presentTask(access, await repo.find(id));
      if (owner && owner.id !== row.ownerId && owner.id !== actor.id)
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
      const repo = new TasksRepository(access.in(manager));
      const row = await repo.find(id, true);
      if (row.createdBy !== actor.id && !atLeast(access.role, 'manager'))
        throw new ForbiddenError('Only the task’s creator or a manager deletes it');
      await repo.softDelete(row);
      const task = presentTask(access, row);
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
    const counts = await new TasksRepository(access).countsByStatus();
    return {
      workspace: access.name,
      reviews: statusCounts(counts.reviews),
      tasks: statusCounts(counts.tasks),
      reviewTasks: statusCounts(counts.reviewTasks),
    };
  }

  async recentReviews(access: WorkspaceScope, query: WorkspaceReviewsQuery): Promise<DesignReviewList> {
    const status = query.status && query.status !== 'all' ? query.status : null;
    const repo = new ReviewsRepository(access);
    return { items: await this.reviews.presentAll(repo, await repo.recent(status, query.limit ?? 50)) };
  }

  async recentTasks(access: WorkspaceScope, query: WorkspaceTasksQuery): Promise<TaskList> {
    const status = query.status && query.status !== 'all' ? query.status : null;
    const rows = await new TasksRepository(access).recent(status, query.limit ?? 50);
    return { items: rows.map((r) => presentTask(access, r)) };
  }
}
