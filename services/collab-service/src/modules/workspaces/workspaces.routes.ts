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
import type { DataSource } from 'typeorm';
import { currentUser } from '../identity/identity.module';
import { presentUser, type UsersService } from '../identity/users.service';
import { fromParam, fromQuery, requestWorkspace } from './workspace-access';
import { type CollabRouting, memberRoute, userRoute } from './workspace-route';
import type { WorkspacesService } from './workspaces.service';

/** Who has an open event stream in a workspace (the `online` flag of GET /v1/users). */
export interface PresenceReader {
  onlineUserIds(workspaceId: string): Promise<Set<string>>;
}

export interface WorkspaceRouteDeps {
  routing: CollabRouting;
  workspaces: WorkspacesService;
  users: UsersService;
  presence: PresenceReader;
  blobs: BlobStore;
  dataSource: DataSource;
}

const TAGS = ['workspaces'];

/** Workspaces, members and users (sections 4.5, DECISIONS.md section 4). */
export function mountWorkspaceRoutes(deps: WorkspaceRouteDeps): void {
  const { routing, workspaces, users, presence } = deps;

  userRoute(routing, {
    method: 'post',
    path: '/v1/workspaces',
    summary: 'Create a workspace; the creator becomes its owner',
    tags: TAGS,
    body: CreateWorkspaceRequest,
    responses: {
      201: { description: 'Created', schema: Workspace },
      409: { description: 'The name is taken', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      const { name } = req.body as CreateWorkspaceRequest;
      res.status(201).json(await workspaces.create(currentUser(req).id, name));
    },
  });

  userRoute(routing, {
    method: 'get',
    path: '/v1/workspaces',
    summary: 'Workspaces of the current user, with their role',
    tags: TAGS,
    query: ListWorkspacesQuery,
    responses: {
      200: { description: 'Page of workspaces', schema: WorkspaceList },
      403: { description: '`username` names another user', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      const query = res.locals.query as ListWorkspacesQuery;
      const user = currentUser(req);
      if (query.username !== undefined && query.username.toLowerCase() !== user.username) {
        throw new ForbiddenError('username must be your own');
      }
      res.json(await workspaces.listForUser(user.id, query));
    },
  });

  memberRoute(routing, {
    method: 'get',
    path: '/v1/workspaces/:name',
    summary: 'A workspace with the caller’s role',
    tags: TAGS,
    role: 'viewer',
    workspace: fromParam('name'),
    responses: { 200: { description: 'The workspace', schema: Workspace } },
    handler: async (req, res) => {
      res.json(await workspaces.get(requestWorkspace(req)));
    },
  });

  memberRoute(routing, {
    method: 'get',
    path: '/v1/workspaces/:name/members',
    summary: 'Members with their roles',
    tags: TAGS,
    role: 'viewer',
    workspace: fromParam('name'),
    query: PageQuery,
    responses: { 200: { description: 'Page of members', schema: WorkspaceMemberList } },
    handler: async (req, res) => {
      res.json(await workspaces.members(requestWorkspace(req), res.locals.query as PageQuery));
    },
  });

  memberRoute(routing, {
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
    handler: async (req, res) => {
      const { role } = req.body as UpdateWorkspaceMemberRequest;
      res.json(
        await workspaces.setRole(requestWorkspace(req), String(req.params.username), role, currentUser(req)),
      );
    },
  });

  memberRoute(routing, {
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
    handler: async (req, res) => {
      await workspaces.remove(requestWorkspace(req), currentUser(req).id, String(req.params.username));
      res.status(204).end();
    },
  });

  memberRoute(routing, {
    method: 'get',
    path: '/v1/users',
    summary: 'Members of a workspace with an online flag',
    description: '`online` is true while the user holds an open event stream of the workspace.',
    tags: ['users'],
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: UsersQuery,
    responses: { 200: { description: 'Users', schema: WorkspaceUserList } },
    handler: async (req, res) => {
      const access = requestWorkspace(req);
      const [members, online] = await Promise.all([
        workspaces.allMembers(access.id),
        presence.onlineUserIds(access.id),
      ]);
      res.json({
        items: members.map(({ user, role }) => ({ ...presentUser(user), role, online: online.has(user.id) })),
      });
    },
  });

  userRoute(routing, {
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
    handler: async (req, res) => {
      const body = req.body as InitUserRequest;
      let user = currentUser(req);
      if (body.username) {
        user = await deps.dataSource.transaction((manager) =>
          users.claimUsername(manager, user, body.username as string),
        );
      }
      let folder: string | null = null;
      if (body.workspace) {
        const access = await routing.roles.access(user.id, body.workspace);
        if (!access) throw new NotFoundError('Workspace not found');
        folder = `${access.name}/${user.username}/`;
        // Object stores have no folders: a marker object makes the folder exist for listings.
        await deps.blobs.put(`workspaces/${folder}.keep`, Buffer.alloc(0), {
          contentType: 'application/octet-stream',
        });
      }
      const mine = await workspaces.listForUser(user.id, { page: 1, pageSize: 500 });
      res.json({ user: presentUser(user), workspaces: mine.items, folder });
    },
  });
}
