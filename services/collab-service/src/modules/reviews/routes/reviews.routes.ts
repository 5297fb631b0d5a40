import {
  CreateReviewRequest,
  CreateReviewTaskRequest,
  CreateReviewTemplateRequest,
  CreateTaskRequest,
  DesignReview,
  DesignReviewList,
  ErrorBodyDto,
  PathQuery,
  ReviewTask,
  ReviewTemplate,
  ReviewTemplateList,
  Task,
  TaskList,
  UpdateReviewRequest,
  UpdateReviewTaskRequest,
  UpdateTaskRequest,
  WorkspaceQuery,
  WorkspaceRef,
  WorkspaceReviewsQuery,
  WorkspaceStats,
  WorkspaceTasksQuery,
} from '@hwp/contracts';
import type { RawQuery } from '@hwp/platform';
import { fromPath } from '../../shared-files/routes/file-routing';
import { fromQuery, fromResource, namedOrSole } from '../../workspace-access/workspace-access';
import { memberRoute } from '../../workspace-access/workspace-route';
import type { ReviewsService } from '../reviews.service';
import type { TasksService } from '../tasks.service';

const TAGS = ['reviews'];
const NOT_FOUND = { description: 'No such review, task or template in the workspace', schema: ErrorBodyDto };
const BAD_MOVE = { description: 'The status move is outside the state machine', schema: ErrorBodyDto };

export const listReviews = (reviews: ReviewsService) =>
  memberRoute<unknown, PathQuery>({
    method: 'get',
    path: '/v1/reviews',
    summary: 'Design reviews of a path, newest first, with their tasks',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    query: PathQuery,
    responses: { 200: { description: 'Reviews', schema: DesignReviewList } },
    handler: ({ query, workspace }) => reviews.list(workspace, query.path),
  });

export const createReview = (reviews: ReviewsService) =>
  memberRoute<CreateReviewRequest, RawQuery>({
    method: 'post',
    path: '/v1/reviews',
    summary: 'Ask a member (or an invited address) to review a path',
    description:
      'From a template (`templateId`) its checklist becomes the review’s tasks. The reviewer is emailed; a `review` event.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromPath(),
    body: CreateReviewRequest,
    status: 201,
    responses: {
      201: { description: 'The review', schema: DesignReview },
      400: { description: 'Reviewer not a member nor invited', schema: ErrorBodyDto },
      404: NOT_FOUND,
    },
    handler: ({ body, user, workspace }) => reviews.create(user, workspace, body),
  });

export const updateReview = (reviews: ReviewsService) =>
  memberRoute<UpdateReviewRequest, RawQuery>({
    method: 'patch',
    path: '/v1/reviews/:id',
    summary: 'Change a review’s status, reviewer or due date',
    description:
      'open -> in_review -> completed; open|in_review -> canceled; completed|canceled -> open (manager+). Others: 409. ' +
      'The creator, the reviewer or a manager. `workspace` in the query or the body.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromResource('review'),
    body: UpdateReviewRequest,
    responses: { 200: { description: 'The review', schema: DesignReview }, 404: NOT_FOUND, 409: BAD_MOVE },
    handler: ({ body, params, user, workspace }) => reviews.update(user, workspace, params.id, body),
  });

export const addReviewTask = (reviews: ReviewsService) =>
  memberRoute<CreateReviewTaskRequest, RawQuery>({
    method: 'post',
    path: '/v1/reviews/:id/tasks',
    summary: 'Add a task to a review (the reviewer or a manager)',
    tags: TAGS,
    role: 'viewer',
    workspace: fromResource('review'),
    body: CreateReviewTaskRequest,
    status: 201,
    responses: { 201: { description: 'The task', schema: ReviewTask }, 404: NOT_FOUND },
    handler: ({ body, params, user, workspace }) => reviews.addTask(user, workspace, params.id, body),
  });

export const moveReviewTask = (reviews: ReviewsService) =>
  memberRoute<UpdateReviewTaskRequest, RawQuery>({
    method: 'patch',
    path: '/v1/reviews/:id/tasks/:taskId',
    summary: 'Move a review task (the reviewer or a manager)',
    description:
      'open <-> in_progress -> done; any but done -> canceled; done|canceled -> open. Others: 409.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromResource('review'),
    body: UpdateReviewTaskRequest,
    responses: { 200: { description: 'The task', schema: ReviewTask }, 404: NOT_FOUND, 409: BAD_MOVE },
    handler: ({ body, params, user, workspace }) =>
      reviews.moveTask(user, workspace, params.id, params.taskId, body.status),
  });

export const listTasks = (tasks: TasksService) =>
  memberRoute<unknown, PathQuery>({
    method: 'get',
    path: '/v1/tasks',
    summary: 'Tasks on a path, by sortIndex',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    query: PathQuery,
    responses: { 200: { description: 'Tasks', schema: TaskList } },
    handler: ({ query, workspace }) => tasks.list(workspace, query.path),
  });

export const createTask = (tasks: TasksService) =>
  memberRoute<CreateTaskRequest, RawQuery>({
    method: 'post',
    path: '/v1/tasks',
    summary: 'A task on a path (its owner is emailed)',
    tags: TAGS,
    role: 'engineer',
    workspace: fromPath(),
    body: CreateTaskRequest,
    status: 201,
    responses: {
      201: { description: 'The task', schema: Task },
      400: { description: 'Owner not a member', schema: ErrorBodyDto },
    },
    handler: ({ body, user, workspace }) => tasks.create(user, workspace, body),
  });

export const updateTask = (tasks: TasksService) =>
  memberRoute<UpdateTaskRequest, RawQuery>({
    method: 'patch',
    path: '/v1/tasks/:id',
    summary: 'Change a task (its creator, its owner or a manager)',
    description: 'Status by the task state machine (409 outside it). `workspace` in the query or the body.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromResource('task'),
    body: UpdateTaskRequest,
    responses: { 200: { description: 'The task', schema: Task }, 404: NOT_FOUND, 409: BAD_MOVE },
    handler: ({ body, params, user, workspace }) => tasks.update(user, workspace, params.id, body),
  });

export const deleteTask = (tasks: TasksService) =>
  memberRoute<unknown, WorkspaceRef>({
    method: 'delete',
    path: '/v1/tasks/:id',
    summary: 'Soft-delete a task (its creator or a manager)',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('task'),
    query: WorkspaceRef,
    responses: { 200: { description: 'The deleted task', schema: Task }, 404: NOT_FOUND },
    handler: ({ params, user, workspace }) => tasks.remove(user, workspace, params.id),
  });

export const workspaceStats = (tasks: TasksService) =>
  memberRoute<unknown, WorkspaceQuery>({
    method: 'get',
    path: '/v1/workspace/stats',
    summary: 'Reviews, tasks and review tasks by status, with overdue counts',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: WorkspaceQuery,
    responses: { 200: { description: 'Counts', schema: WorkspaceStats } },
    handler: ({ workspace }) => tasks.stats(workspace),
  });

export const workspaceReviews = (tasks: TasksService) =>
  memberRoute<unknown, WorkspaceReviewsQuery>({
    method: 'get',
    path: '/v1/workspace/reviews',
    summary: 'The workspace’s newest reviews (status filter, limit)',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: WorkspaceReviewsQuery,
    responses: { 200: { description: 'Reviews', schema: DesignReviewList } },
    handler: ({ query, workspace }) => tasks.recentReviews(workspace, query),
  });

export const workspaceTasks = (tasks: TasksService) =>
  memberRoute<unknown, WorkspaceTasksQuery>({
    method: 'get',
    path: '/v1/workspace/tasks',
    summary: 'The workspace’s newest tasks (status filter, limit)',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: WorkspaceTasksQuery,
    responses: { 200: { description: 'Tasks', schema: TaskList } },
    handler: ({ query, workspace }) => tasks.recentTasks(workspace, query),
  });

export const listTemplates = (reviews: ReviewsService) =>
  memberRoute<unknown, WorkspaceQuery>({
    method: 'get',
    path: '/v1/review-templates',
    summary: 'Review templates of the workspace',
    tags: TAGS,
    role: 'engineer',
    workspace: fromQuery('workspace'),
    query: WorkspaceQuery,
    responses: { 200: { description: 'Templates', schema: ReviewTemplateList } },
    handler: ({ workspace }) => reviews.templates(workspace),
  });

export const createTemplate = (reviews: ReviewsService) =>
  memberRoute<CreateReviewTemplateRequest, RawQuery>({
    method: 'post',
    path: '/v1/review-templates',
    summary: 'A review template with a checklist (manager+)',
    tags: TAGS,
    role: 'manager',
    workspace: namedOrSole('manager'),
    body: CreateReviewTemplateRequest,
    status: 201,
    responses: {
      201: { description: 'The template', schema: ReviewTemplate },
      409: { description: 'The name is taken', schema: ErrorBodyDto },
    },
    handler: ({ body, user, workspace }) => reviews.createTemplate(user, workspace, body),
  });

export const deleteTemplate = (reviews: ReviewsService) =>
  memberRoute<unknown, WorkspaceRef>({
    method: 'delete',
    path: '/v1/review-templates/:id',
    summary: 'Delete a review template (manager+)',
    tags: TAGS,
    role: 'manager',
    workspace: fromResource('reviewTemplate'),
    query: WorkspaceRef,
    responses: { 200: { description: 'The templates left', schema: ReviewTemplateList }, 404: NOT_FOUND },
    handler: ({ params, workspace }) => reviews.deleteTemplate(workspace, params.id),
  });
