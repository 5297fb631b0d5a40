import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { type Items, ItemsOf, type Page, PageOf, PageQuery } from '../common/paging';
import { NestedList, Nullable } from '../common/schema';

/** Workspace roles, lowest to highest (section 5.2). */
export const WORKSPACE_ROLES = ['viewer', 'engineer', 'manager', 'owner'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

/** Workspace names appear in file paths (`<workspace>/<username>/<file>`): a safe path segment. */
export const WORKSPACE_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{1,63}$/;
/** Usernames: lowercase `[a-z0-9._-]` (DECISIONS.md section 4). */
export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A collaboration user (DECISIONS.md section 4); `id` is the API host's user id (token `sub`). */
export class CollabUser {
  @IsUUID()
  id: string;

  @IsString()
  email: string;

  @IsString()
  username: string;

  @IsString()
  displayName: string;
}

/** `GET /api/session` and `POST /api/auth/session`: the signed-in user, or `null`. */
export class SessionResponse {
  @ValidateNested()
  @Type(() => CollabUser)
  @Nullable()
  user: CollabUser | null;
}

/** `GET /api/auth/config`. */
export class AuthConfigResponse {
  /** Joining needs an invitation (no self-service workspace creation for uninvited users). */
  @IsBoolean()
  requiresInvitation: boolean;
}

/** `GET /v1/config`. */
export class ClientConfigResponse {
  /** Phase 1: branch writes use a filename suffix; phase 2: first-class branches. */
  @IsBoolean()
  branchSuffixWrites: boolean;
}

export class CreateWorkspaceRequest {
  /** 2-64 characters: lowercase letters, digits, `.`, `_`, `-`; unique. */
  @Matches(WORKSPACE_NAME_PATTERN, {
    message: 'name must be 2-64 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit',
  })
  name: string;
}

export class Workspace {
  @IsUUID()
  id: string;

  @IsString()
  name: string;

  @IsUUID()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  /** The caller's role. */
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

export const WorkspaceList = PageOf(Workspace, 'WorkspaceList');
export type WorkspaceList = Page<Workspace>;

/** `GET /v1/workspaces?username`: `username`, when given, must be the caller's. */
export class ListWorkspacesQuery extends PageQuery {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  username?: string;
}

export class WorkspaceMember {
  @IsUUID()
  userId: string;

  @IsString()
  username: string;

  @IsString()
  email: string;

  @IsString()
  displayName: string;

  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;

  @IsISO8601()
  joinedAt: string;
}

export const WorkspaceMemberList = PageOf(WorkspaceMember, 'WorkspaceMemberList');
export type WorkspaceMemberList = Page<WorkspaceMember>;

/** `PATCH /v1/workspaces/:name/members/:username` (manager+; owner to grant or take owner). */
export class UpdateWorkspaceMemberRequest {
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

/** `GET /v1/users?workspace`. */
export class UsersQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;
}

/** A workspace member with presence: `online` while they hold an open event stream. */
export class WorkspaceUser extends CollabUser {
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;

  @IsBoolean()
  online: boolean;
}

export const WorkspaceUserList = ItemsOf(WorkspaceUser, 'WorkspaceUserList');
export type WorkspaceUserList = Items<WorkspaceUser>;

/** `POST /v1/users/init`: make sure the caller's record (and, with a workspace, their folder) exists. */
export class InitUserRequest {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;

  /** A preferred username; kept when free, else the derived one stays. */
  @IsOptional()
  @Matches(USERNAME_PATTERN, { message: 'username must be lowercase letters, digits, ".", "_" or "-"' })
  username?: string;
}

export class InitUserResponse {
  @ValidateNested()
  @Type(() => CollabUser)
  user: CollabUser;

  /** Workspaces the user belongs to, with role. */
  @NestedList(() => Workspace)
  workspaces: Workspace[];

  /** The user's folder `<workspace>/<username>/`, when a workspace was named. */
  @IsOptional()
  @IsString()
  @Nullable()
  folder: string | null;
}
