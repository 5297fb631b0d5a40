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
  ValidationError,
} from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { FileEvents } from '../shared-files/file-guards';
import { parsePath, pathOf } from '../shared-files/file-paths';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { checkReviewMove, checkTaskMove, isReopen } from './review-flow';
import { presentReview, presentReviewTask, presentTemplate } from './reviews.presenter';
import { memberByEmail, type ReviewRow, ReviewsRepository } from './reviews.repository';

/** A reviewer: a member or an invited address (400 otherwise). */
async function reviewerOf(scope: WorkspaceScope, email: string) {
  const reviewer = await memberByEmail(scope, email);
  if (!reviewer) {
    throw new ValidationError(`${email} is not a member of ${scope.name}, nor invited to it`, [
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
 * request emails the reviewer. The rows: ReviewsRepository.
 */
export class ReviewsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: FileEvents,
    private readonly bus: Bus,
  ) {}

  /** The reviews with their tasks. */
  async presentAll(repo: ReviewsRepository, rows: ReviewRow[]): Promise<DesignReview[]> {
    const tasks = await repo.tasksOf(rows);
    return rows.map((r) => presentReview(repo.scope, r, tasks.get(r.id)));
  }

  async list(access: WorkspaceScope, path: string): Promise<DesignReviewList> {
    const repo = new ReviewsRepository(access);
    return { items: await this.presentAll(repo, await repo.onPath(pathOf(parsePath(path)))) };
  }

  /** Engineer+: a review of a path, from a template when `templateId` (its checklist becomes the tasks). */
  async create(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    request: CreateReviewRequest,
  ): Promise<DesignReview> {
    const path = pathOf(parsePath(request.path));
    return this.dataSource.transaction(async (manager) => {
      const scope = access.in(manager);
      const repo = new ReviewsRepository(scope);
      const reviewer = await reviewerOf(scope, request.reviewerEmail);
      if (request.versionId && !(await repo.hasVersion(parsePath(path), request.versionId)))
        throw new NotFoundError(`No version ${request.versionId} of ${path}`);
      const template = request.templateId ? await repo.template(request.templateId) : null;
      const message = (request.message ?? '') || (template?.message ?? '');
      const id = newId();
      await repo.insert({
        id,
        path,
        versionId: request.versionId ?? null,
        reviewer,
        message,
        dueAt: request.dueAt ?? null,
        templateId: request.templateId ?? null,
        createdBy: actor.id,
      });
      const row = await repo.find(id);
      await repo.insertChecklist(row, template?.checklist ?? [], actor.id);
      const [review] = await this.presentAll(repo, [row]);
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
      const scope = access.in(manager);
      const repo = new ReviewsRepository(scope);
      const row = await repo.find(id, true);
      this.assertReviewParty(actor, access, row);
      if (request.status && request.status !== row.status) {
        checkReviewMove(row.status, request.status);
        if (isReopen(row.status, request.status) && !atLeast(access.role, 'manager'))
          throw new ForbiddenError('Reopening a review needs the manager role or higher');
      }
      const reviewer = request.reviewerEmail ? await reviewerOf(scope, request.reviewerEmail) : null;
      await repo.update(row, { status: request.status ?? null, reviewer, dueAt: request.dueAt });
      const [review] = await this.presentAll(repo, [await repo.find(id)]);
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
      const repo = new ReviewsRepository(access.in(manager));
      const row = await repo.find(id, true);
      this.assertReviewerOrManager(actor, access, row);
      const added = await repo.addTask(
        row,
        { title: request.title, description: request.description ?? '', dueAt: request.dueAt ?? null },
        actor.id,
      );
      const task = presentReviewTask(added);
      await this.events.emit(
        manager,
        access.ref,
        'review',
        { action: 'task.created', reviewId: id, task },
        { actor, path: row.path },
      );
      return task;
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
      const repo = new ReviewsRepository(access.in(manager));
      const row = await repo.find(id, true);
      this.assertReviewerOrManager(actor, access, row);
      const task = await repo.task(row, taskId);
      checkTaskMove(task.status, status);
      const moved = presentReviewTask(await repo.moveTask(row, taskId, status));
      await this.events.emit(
        manager,
        access.ref,
        'review',
        { action: 'task.updated', reviewId: id, task: moved },
        { actor, path: row.path },
      );
      return moved;
    });
  }

  private assertReviewParty(actor: CollabUserEntity, access: WorkspaceScope, row: ReviewRow): void {
    if (row.createdBy === actor.id || row.reviewerId === actor.id || atLeast(access.role, 'manager')) return;
    if (row.reviewerEmail.toLowerCase() === actor.email.toLowerCase()) return;
    throw new ForbiddenError('Only the review’s creator, its reviewer or a manager changes it');
  }

  private assertReviewerOrManager(actor: CollabUserEntity, access: WorkspaceScope, row: ReviewRow): void {
    if (row.reviewerId === actor.id || row.reviewerEmail.toLowerCase() === actor.email.toLowerCase()) return;
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
    return { items: (await new ReviewsRepository(access).listTemplates()).map(presentTemplate) };
  }

  async createTemplate(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    request: CreateReviewTemplateRequest,
  ): Promise<ReviewTemplate> {
    const id = newId();
    const name = request.name.trim();
    try {
      await new ReviewsRepository(access).insertTemplate({
        id,
        name,
        message: request.message ?? '',
        checklist: request.checklist.map((c) => c.trim()),
        createdBy: actor.id,
      });
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw new ConflictError(`A template named ${name} exists`, { field: 'name' });
      throw error;
    }
    return (await this.templates(access)).items.find((t) => t.id === id) as ReviewTemplate;
  }

  async deleteTemplate(access: WorkspaceScope, id: string): Promise<ReviewTemplateList> {
    if (!(await new ReviewsRepository(access).deleteTemplate(id)))
      throw new NotFoundError('No such review template in the workspace');
    return this.templates(access);
  }
}
