import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { IsEmailAddress } from './auth';
import { type Items, ItemsOf, type Page, PageOf, PageQuery } from './paging';
import { NestedList, Nullable } from './schema';

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

export const INVITATION_STATUSES = ['pending', 'accepted', 'expired', 'revoked'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/** `POST /api/invitations/send` (manager+ in the workspace; 5 per minute per IP). */
export class SendInvitationRequest {
  @IsEmailAddress()
  email: string;

  /**
   * @deprecated Ignored: the email names the signed-in sender (DECISIONS.md section 4). Still
   * accepted because the interface document lists it; its value is never used.
   */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @JSONSchema({
    deprecated: true,
    description: 'Ignored: the invitation names the signed-in sender. Accepted for compatibility only.',
  })
  invitedBy?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  /** Default `engineer`; only an owner may invite an owner. */
  @IsOptional()
  @IsIn(WORKSPACE_ROLES)
  role?: WorkspaceRole;
}

export class Invitation {
  @IsUUID()
  id: string;

  @IsString()
  email: string;

  @IsString()
  workspace: string;

  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;

  @IsString()
  invitedBy: string;

  @IsIn(INVITATION_STATUSES)
  status: InvitationStatus;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  expiresAt: string;

  @IsISO8601()
  @Nullable()
  acceptedAt: string | null;
}

/** The sender's answer also carries the code (to share the link another way). */
export class SentInvitation extends Invitation {
  @IsString()
  invitationCode: string;
}

export const InvitationList = ItemsOf(Invitation, 'InvitationList');
export type InvitationList = Items<Invitation>;

/** `GET /api/invitations?status&workspace&limit`. */
export class ListInvitationsQuery {
  @IsOptional()
  @IsIn(['all', 'pending', 'accepted'])
  status?: 'all' | 'pending' | 'accepted';

  /** Managers of the workspace see every invitation of it; others only their own. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

export class InvitationCodeRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  invitationCode: string;
}

/** `POST /api/invitations/validate` (open): whether a code can be accepted, and for what. */
export class InvitationValidation {
  @IsBoolean()
  valid: boolean;

  /** Why not, when not valid: `not_found`, `expired`, `accepted`, `revoked`. */
  @IsOptional()
  @IsString()
  reason?: string;

  @IsOptional()
  @IsString()
  workspace?: string;

  @IsOptional()
  @IsIn(WORKSPACE_ROLES)
  role?: WorkspaceRole;

  @IsOptional()
  @IsString()
  email?: string;

  @IsOptional()
  @IsISO8601()
  expiresAt?: string;
}

/** `POST /api/invitations/accept`: the membership it created. */
export class AcceptedInvitation {
  @IsString()
  workspace: string;

  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

/** SSE event types (section 6 and DECISIONS.md section 7). */
export const COLLAB_EVENT_TYPES = [
  'update',
  'version',
  'presence',
  'comment',
  'lock',
  'unlock',
  'task',
  'review',
  'bom',
  'part',
  'import.progress',
  'translation',
  'conflict',
  'lock.request',
  'mention',
] as const;
export type CollabEventType = (typeof COLLAB_EVENT_TYPES)[number];

/** `data:` of one SSE message (DECISIONS.md section 7); `id` is monotonic per workspace. */
export interface CollabEvent<TData = Record<string, unknown>> {
  id: number;
  type: CollabEventType;
  workspace: string;
  /** Username of whoever caused it, or `system`. */
  actor: string;
  at: string;
  path?: string;
  /** Set for events meant for one user only (`lock.request`, `mention`). */
  to?: string;
  data: TData;
}

/** `GET /v1/events?workspace&username`. */
export class EventsQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  /** When given, must be the caller's username. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  username?: string;

  /**
   * Replays the events after this id, for clients that cannot set the `Last-Event-ID` header on the
   * first connection; the header wins when both are sent (EventSource sends it on reconnects).
   */
  @IsOptional()
  @Matches(/^\d{1,15}$/, { message: 'lastEventId must be an event id (digits)' })
  lastEventId?: string;
}
