import {
  BranchQuery,
  BranchRequest,
  CommentRequest,
  ErrorBodyDto,
  FileBranch,
  FileBranchList,
  FileComment,
  FileCommentList,
  FileConflictList,
  FileLock,
  FileVersionList,
  FolderQuery,
  ForceUnlockRequest,
  LockAllRequest,
  LockAllResult,
  LockNotifyRequest,
  LockNotifyResult,
  LockRequest,
  MergeRequest,
  PathQuery,
  ResolveConflictRequest,
  ResolveResult,
  RevertRequest,
  Timeline,
  TimelineQuery,
  UnlockAllRequest,
  UnlockRequest,
  UnlockResult,
  UploadResult,
} from '@hwp/contracts';
import type { RawQuery } from '@hwp/platform';
import type { RequestHandler } from 'express';
import { fromBody, fromQuery } from '../../workspace-access/workspace-access';
import { memberRoute } from '../../workspace-access/workspace-route';
import type { FileBranchesService } from '../file-branches.service';
import type { FileComments } from '../file-comments.service';
import type { FileLocksService } from '../file-locks.service';
import { checkFilename } from '../file-paths';
import type { FileWrites } from '../file-writes.service';
import type { SharedFilesService } from '../shared-files.service';
import { FORBIDDEN_FOLDER, fromPath, INVALID, LOCKED, NOT_FOUND, TAGS } from './file-routing';

export const listVersions = (files: SharedFilesService) =>
  memberRoute<unknown, PathQuery>({
    method: 'get',
    path: '/v1/versions',
    summary: 'Versions of a file, newest first, with the nearest comment',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    query: PathQuery,
    responses: { 200: { description: 'Versions', schema: FileVersionList }, 404: NOT_FOUND },
    handler: ({ query, workspace }) => files.versions(workspace, query.path),
  });

export const timeline = (files: SharedFilesService) =>
  memberRoute<unknown, TimelineQuery>({
    method: 'get',
    path: '/v1/timeline',
    summary: 'Versions, comments and tasks of a path merged by time',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    query: TimelineQuery,
    responses: { 200: { description: 'Newest first', schema: Timeline } },
    handler: ({ query, workspace }) => files.timeline(workspace, query.path, query.types),
  });

export const revert = (writes: FileWrites) =>
  memberRoute<RevertRequest, RawQuery>({
    method: 'post',
    path: '/v1/revert',
    summary: 'A new version equal to an earlier one, for everyone',
    description: 'History is never rewritten. Respects locks (423).',
    tags: TAGS,
    role: 'engineer',
    workspace: fromPath(),
    body: RevertRequest,
    responses: {
      200: { description: 'The new version', schema: UploadResult },
      403: FORBIDDEN_FOLDER,
      404: NOT_FOUND,
      423: LOCKED,
    },
    handler: ({ body, user, workspace }) =>
      writes.revert(user, workspace, body.path, body.versionId, body.message),
  });

const branchTarget = (workspace: string, q: { username: string; base: string }) => ({
  workspace,
  username: q.username,
  filename: checkFilename(q.base, 'base'),
});

export const listBranches = (branches: FileBranchesService) =>
  memberRoute<unknown, BranchQuery>({
    method: 'get',
    path: '/v1/branches',
    summary: 'Branches of a file (main first)',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: BranchQuery,
    responses: { 200: { description: 'Branches', schema: FileBranchList }, 404: NOT_FOUND },
    handler: ({ query, workspace }) => branches.list(workspace, branchTarget(workspace.name, query)),
  });

export const createBranch = (branches: FileBranchesService) =>
  memberRoute<BranchRequest, RawQuery>({
    method: 'post',
    path: '/v1/branches/create',
    summary: 'Branch a file from its current version',
    description:
      'Names are [a-z0-9_-]. With BRANCH_SUFFIX_WRITES (default) the branch is written as `<stem>@<branch><.ext>`; ' +
      'otherwise uploads name it in `branch`.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromBody('workspace'),
    body: BranchRequest,
    status: 201,
    responses: {
      201: { description: 'The branch', schema: FileBranch },
      403: FORBIDDEN_FOLDER,
      404: NOT_FOUND,
      409: { description: 'The branch exists', schema: ErrorBodyDto },
    },
    handler: ({ body, user, workspace }) =>
      branches.create(user, workspace, branchTarget(workspace.name, body), body.branch),
  });

export const deleteBranch = (branches: FileBranchesService) =>
  memberRoute<BranchRequest, RawQuery>({
    method: 'post',
    path: '/v1/branches/delete',
    summary: 'Delete a branch (main cannot be deleted)',
    tags: TAGS,
    role: 'engineer',
    workspace: fromBody('workspace'),
    body: BranchRequest,
    responses: {
      200: { description: 'The branches left', schema: FileBranchList },
      400: INVALID,
      404: NOT_FOUND,
      423: LOCKED,
    },
    handler: ({ body, user, workspace }) =>
      branches.remove(user, workspace, branchTarget(workspace.name, body), body.branch),
  });

export const merge = (branches: FileBranchesService) =>
  memberRoute<MergeRequest, RawQuery>({
    method: 'post',
    path: '/v1/merge',
    summary: 'Merge a branch into main (a new main version)',
    description:
      'If main moved since the branch point (or the last merge): 409 unless `force: true`. Respects locks.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromBody('workspace'),
    body: MergeRequest,
    responses: {
      200: { description: 'The new main version', schema: UploadResult },
      404: NOT_FOUND,
      409: { description: 'main moved', schema: ErrorBodyDto },
      423: LOCKED,
    },
    handler: ({ body, user, workspace }) =>
      branches.merge(
        user,
        workspace,
        { workspace: workspace.name, username: body.username, filename: checkFilename(body.filename) },
        body.fromBranch,
        { message: body.message, force: body.force },
      ),
  });

export const listComments = (comments: FileComments) =>
  memberRoute<unknown, PathQuery>({
    method: 'get',
    path: '/v1/comments',
    summary: 'Comments on a path, oldest first',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    query: PathQuery,
    responses: { 200: { description: 'Comments', schema: FileCommentList } },
    handler: ({ query, workspace }) => comments.list(workspace, query.path),
  });

export const postComment = (comments: FileComments, limit: RequestHandler) =>
  memberRoute<CommentRequest, RawQuery>({
    method: 'post',
    path: '/v1/comments',
    summary: 'Comment on a path; @username mentions notify members',
    description:
      'Each mentioned member gets a `mention` event (to them only) and an email. 120 per minute per workspace and address.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    before: [limit],
    body: CommentRequest,
    status: 201,
    responses: { 201: { description: 'The comment', schema: FileComment }, 400: INVALID },
    handler: ({ body, user, workspace }) => comments.create(user, workspace, body.path, body.body),
  });

export const currentLock = (locks: FileLocksService) =>
  memberRoute<unknown, PathQuery>({
    method: 'get',
    path: '/v1/locks',
    summary: 'The valid lock on a path, or null',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    query: PathQuery,
    responses: {
      200: {
        description: 'The valid lock, or `null` when the path is not locked',
        schema: { anyOf: [{ $ref: '#/components/schemas/FileLock' }, { type: 'null' }] },
      },
    },
    handler: ({ query, workspace }) => locks.current(workspace, query.path),
  });

export const lock = (locks: FileLocksService) =>
  memberRoute<LockRequest, RawQuery>({
    method: 'post',
    path: '/v1/locks/lock',
    summary: 'Lock a path (ttl default 10 min, at least 1 min)',
    description:
      '409 while another user holds a valid lock; the holder locking again refreshes the ttl. Expiry is by time.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromPath(),
    body: LockRequest,
    responses: {
      200: { description: 'The lock', schema: FileLock },
      400: INVALID,
      409: { description: 'Held by another user', schema: ErrorBodyDto },
    },
    handler: ({ body, user, workspace }) => locks.lock(user, workspace, body.path, body.ttlMs),
  });

export const unlock = (locks: FileLocksService) =>
  memberRoute<UnlockRequest, RawQuery>({
    method: 'post',
    path: '/v1/locks/unlock',
    summary: 'Release a lock by its lockId',
    description: 'Another lock id: 403; no valid lock: `{ unlocked: false }`.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromPath(),
    body: UnlockRequest,
    responses: { 200: { description: 'Released or not', schema: UnlockResult } },
    handler: ({ body, user, workspace }) => locks.unlock(user, workspace, body.path, body.lockId),
  });

export const forceUnlock = (locks: FileLocksService) =>
  memberRoute<ForceUnlockRequest, RawQuery>({
    method: 'post',
    path: '/v1/locks/force-unlock',
    summary: 'Remove anyone’s lock (manager+)',
    description: 'The owner gets an `unlock` event; a message is posted as a comment on the path.',
    tags: TAGS,
    role: 'manager',
    workspace: fromPath(),
    body: ForceUnlockRequest,
    responses: { 200: { description: 'Released or not', schema: UnlockResult } },
    handler: ({ body, user, workspace }) => locks.forceUnlock(user, workspace, body.path, body.message),
  });

export const requestLock = (locks: FileLocksService, limit: RequestHandler) =>
  memberRoute<LockNotifyRequest, RawQuery>({
    method: 'post',
    path: '/v1/locks/request',
    summary: 'Ask the lock’s owner to release it',
    description:
      'A `lock.request` event to the owner only; changes nothing. 60 per minute per workspace and address.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromPath(),
    before: [limit],
    body: LockNotifyRequest,
    responses: { 200: { description: 'Whether an owner was told', schema: LockNotifyResult } },
    handler: ({ body, user, workspace }) => locks.request(user, workspace, body.path),
  });

export const lockAll = (locks: FileLocksService) =>
  memberRoute<LockAllRequest, RawQuery>({
    method: 'post',
    path: '/v1/locks/lock-all',
    summary: 'Lock every file of the workspace (manager+)',
    description: 'Files another user holds a valid lock on are left (listed in `skipped`).',
    tags: TAGS,
    role: 'manager',
    workspace: fromBody('workspace'),
    body: LockAllRequest,
    responses: { 200: { description: 'Counts', schema: LockAllResult } },
    handler: ({ body, user, workspace }) => locks.lockAll(user, workspace, body.ttlMs),
  });

export const unlockAll = (locks: FileLocksService) =>
  memberRoute<UnlockAllRequest, RawQuery>({
    method: 'post',
    path: '/v1/locks/unlock-all',
    summary: 'Release every lock of the workspace (manager+)',
    tags: TAGS,
    role: 'manager',
    workspace: fromBody('workspace'),
    body: UnlockAllRequest,
    responses: { 200: { description: 'Counts', schema: LockAllResult } },
    handler: ({ user, workspace }) => locks.unlockAll(user, workspace),
  });

export const listConflicts = (branches: FileBranchesService) =>
  memberRoute<unknown, FolderQuery>({
    method: 'get',
    path: '/v1/conflicts',
    summary: 'Open conflicts of a user’s files',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: FolderQuery,
    responses: { 200: { description: 'Conflicts', schema: FileConflictList } },
    handler: ({ query, workspace }) => branches.conflicts(workspace, query.username),
  });

export const resolveConflict = (branches: FileBranchesService) =>
  memberRoute<ResolveConflictRequest, RawQuery>({
    method: 'post',
    path: '/v1/conflicts/resolve',
    summary: 'Accept one version for everyone and remove the conflict copies',
    tags: TAGS,
    role: 'engineer',
    workspace: fromPath('baseName'),
    body: ResolveConflictRequest,
    responses: {
      200: { description: 'The file’s version now', schema: ResolveResult },
      404: NOT_FOUND,
      423: LOCKED,
    },
    handler: ({ body, user, workspace }) =>
      branches.resolve(user, workspace, body.baseName, body.acceptedPath, body.message),
  });
