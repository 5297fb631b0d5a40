import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { IsEmailAddress } from '../auth/auth-validators';
import { type Items, ItemsOf } from '../common/paging';
import { Nullable } from '../common/schema';
import { WORKSPACE_ROLES, type WorkspaceRole } from './workspaces.dto';

/** Invitations to a workspace (collaboration host): send, list, validate and accept a code. */

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
