import {
  CreateWorkspaceRequest,
  ErrorBodyDto,
  InitUserRequest,
  InitUserResponse,
  ListWorkspacesQuery,
  PageQuery,
  UpdateWorkspaceMemberRequest,
  UsersQuery,
  Workspace,
  WorkspaceList,
  WorkspaceMember,
  WorkspaceMemberList,
  WorkspaceUserList,
} from '@hwp/contracts';
import { type BlobStore, ForbiddenError, NotFoundError } from '@hwp/platform';
import type { PresenceReader } from '../events/presence.service';
import { presentUser, type UsersService } from '../identity/users.service';
import { fromParam, fromQuery } from '../workspace-access/workspace-access';
import { memberRoute, userRoute } from '../workspace-access/workspace-route';
import type { WorkspacesService } from './workspaces.service';

const TAGS = ['workspaces'];

// Workspaces, members and users (sections 4.5, DECISIONS.md section 4).

export const createWorkspace = (workspaces: WorkspacesService) =>
  userRoute({
    method: 'post',
    path: '/v1/workspaces',
    summary: 'Create a workspace; the creator becomes its owner',
    tags: TAGS,
    body: CreateWorkspaceRequest,
    responses: {
      201: { description: 'Created', schema: Workspace },
      409: { description: 'The name is taken', schema: ErrorBodyDto },
    },
    status: 201,
    handler: ({ body, user }) => workspaces.create(user.id, body.name),
  });

export const listWorkspaces = (workspaces: WorkspacesService) =>
  userRoute({
    method: 'get',
    path: '/v1/workspaces',
    summary: 'Workspaces of the current user, with their role',
    tags: TAGS,
    query: ListWorkspacesQuery,
    responses: {
      200: { description: 'Page of workspaces', schema: WorkspaceList },
      403: { description: '`username` names another user', schema: ErrorBodyDto },
    },
    handler: ({ query, user }) => {
      if (query.username !== undefined && query.username.toLowerCase() !== user.username) {
        throw new ForbiddenError('username must be your own');
      }
      return workspaces.listForUser(user.id, query);
    },
  });

export const getWorkspace = (workspaces: WorkspacesService) =>
  memberRoute({
    method: 'get',
    path: '/v1/workspaces/:name',
    summary: 'A workspace with the caller’s role',
    tags: TAGS,
    role: 'viewer',
    workspace: fromParam('name'),
    responses: { 200: { description: 'The workspace', schema: Workspace } },
    handler: ({ workspace }) => workspaces.get(workspace),
  });

export const listMembers = (workspaces: WorkspacesService) =>
  memberRoute({
    method: 'get',
    path: '/v1/workspaces/:name/members',
    summary: 'Members with their roles',
    tags: TAGS,
    role: 'viewer',
    workspace: fromParam('name'),
    query: PageQuery,
    responses: { 200: { description: 'Page of members', schema: WorkspaceMemberList } },
    handler: ({ query, workspace }) => workspaces.members(workspace, query),
  });

export const setMemberRole = (workspaces: WorkspacesService) =>
  memberRoute({
    method: 'patch',
    path: '/v1/workspaces/:name/members/:username',
    summary: "Change a member's role (manager+; owner to grant or take owner)",
    tags: TAGS,
    role: 'manager',
    workspace: fromParam('name'),
    body: UpdateWorkspaceMemberRequest,
    responses: {
      200: { description: 'Updated', schema: WorkspaceMember },
      409: { description: 'It would leave the workspace without an owner', schema: ErrorBodyDto },
    },
    handler: ({ body, params, user, workspace }) =>
      workspaces.setRole(workspace, params.username, body.role, user),
  });

export const removeMember = (workspaces: WorkspacesService) =>
  memberRoute({
    method: 'delete',
    path: '/v1/workspaces/:name/members/:username',
    summary: 'Remove a member (manager+), or leave (yourself)',
    description: 'Any member may remove themselves; removing someone else needs manager+.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromParam('name'),
    responses: {
      204: { description: 'Removed' },
      409: { description: 'It would leave the workspace without an owner', schema: ErrorBodyDto },
    },
    handler: async ({ params, user, workspace, res }) => {
      await workspaces.remove(workspace, user.id, params.username);
      res.status(204).end();
    },
  });

export const listUsers = (workspaces: WorkspacesService, presence: PresenceReader) =>
  memberRoute({
    method: 'get',
    path: '/v1/users',
    summary: 'Members of a workspace with an online flag',
    description: '`online` is true while the user holds an open event stream of the workspace.',
    tags: ['users'],
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: UsersQuery,
    responses: { 200: { description: 'Users', schema: WorkspaceUserList } },
    handler: async ({ workspace }) => {
      const [members, online] = await Promise.all([
        workspaces.allMembers(workspace.id),
        presence.onlineUserIds(workspace.id),
      ]);
      return {
        items: members.map(({ user, role }) => ({ ...presentUser(user), role, online: online.has(user.id) })),
      };
    },
  });

export const initUser = (workspaces: WorkspacesService, users: UsersService, blobs: BlobStore) =>
  userRoute({
    method: 'post',
    path: '/v1/users/init',
    summary: 'Initialize the current user: record, preferred username, and their folder in a workspace',
    description:
      'Backfills the collaboration user from the token, takes `username` when it is free, and with `workspace` (of which the caller must be a member) creates the folder `<workspace>/<username>/`.',
    tags: ['users'],
    body: InitUserRequest,
    responses: {
      200: { description: 'The user, their workspaces and folder', schema: InitUserResponse },
      404: { description: 'No such workspace among the caller’s', schema: ErrorBodyDto },
    },
    handler: async ({ body, user: caller, memberOf }) => {
      const user = body.username ? await users.claimUsername(caller, body.username) : caller;
      let folder: string | null = null;
      if (body.workspace) {
        const access = await memberOf(body.workspace);
        if (!access) throw new NotFoundError('Workspace not found');
        folder = `${access.name}/${user.username}/`;
        // Object stores have no folders: a marker object makes the folder exist for listings.
        await blobs.put(`workspaces/${folder}.keep`, Buffer.alloc(0), {
          contentType: 'application/octet-stream',
        });
      }
      const mine = await workspaces.listForUser(user.id, { page: 1, pageSize: 500 });
      return { user: presentUser(user), workspaces: mine.items, folder };
    },
  });
