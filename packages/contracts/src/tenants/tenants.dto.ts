import {
  IsIn,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Matches,
  MaxLength,
} from 'class-validator';
import { IsEmailAddress } from '../auth/auth-validators';
import { type Page, PageOf } from '../common/paging';
import { FreeFormObject, NestedList, Nullable } from '../common/schema';

/** Membership roles of a tenant, lowest to highest (DECISIONS.md section 2). */
export const TENANT_ROLES = ['member', 'admin', 'owner'] as const;
export type TenantRole = (typeof TENANT_ROLES)[number];

/** Tenant slugs: lowercase letters, digits and single dashes, 2 to 63 characters. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){1,62}$/;

/** `POST /tenant/create`: the caller becomes owner. */
export class CreateTenantRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  /** Derived from the name when absent. */
  @IsOptional()
  @Matches(SLUG_PATTERN, { message: 'slug must be 2-63 lowercase letters, digits or single dashes' })
  slug?: string;
}

/** `PUT /tenant/{tenant_id}` (admin+): the fields given are changed. */
export class UpdateTenantRequest {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;

  @IsOptional()
  @Matches(SLUG_PATTERN, { message: 'slug must be 2-63 lowercase letters, digits or single dashes' })
  slug?: string;

  /** Replaces the settings object. */
  @IsOptional()
  @FreeFormObject('Tenant settings, replaced as a whole')
  settings?: Record<string, unknown>;
}

/** A tenant as its members see it, with the caller's role. */
export class Tenant {
  @IsUUID()
  id: string;

  @IsString()
  name: string;

  @IsString()
  slug: string;

  @FreeFormObject()
  settings: Record<string, unknown>;

  @IsUUID()
  @Nullable()
  created_by: string | null;

  @IsISO8601()
  created_at: string;

  @IsISO8601()
  updated_at: string;

  /** The caller's role in this tenant. */
  @IsIn(TENANT_ROLES)
  role: TenantRole;
}

export const TenantList = PageOf(Tenant, 'TenantList');
export type TenantList = Page<Tenant>;

/** Who a member or profile is: contact and names (empty string when no email or phone). */
class PersonFields {
  @IsString()
  email: string;

  @IsString()
  phone: string;

  @IsString()
  @Nullable()
  first_name: string | null;

  @IsString()
  @Nullable()
  last_name: string | null;
}

export class TenantMember extends PersonFields {
  @IsUUID()
  user_id: string;

  @IsIn(TENANT_ROLES)
  role: TenantRole;

  @IsISO8601()
  created_at: string;
}

export const TenantMemberList = PageOf(TenantMember, 'TenantMemberList');
export type TenantMemberList = Page<TenantMember>;

/**
 * `POST /tenant/{tenant_id}/members` (admin+): invites an email address. Nobody becomes a member
 * until they accept (`POST /tenant-invitations/accept`), and the answer is the same whether or not
 * an account uses the address.
 */
export class AddTenantMemberRequest {
  @IsEmailAddress()
  email: string;

  @IsIn(TENANT_ROLES)
  role: TenantRole;
}

/** `PATCH /tenant/{tenant_id}/members/{user_id}` (admin+; owner to grant or take owner). */
export class UpdateTenantMemberRequest {
  @IsIn(TENANT_ROLES)
  role: TenantRole;
}

export class ProfileTenant {
  @IsUUID()
  id: string;

  @IsString()
  name: string;

  @IsIn(TENANT_ROLES)
  role: TenantRole;
}

/** `GET /profile` (DECISIONS.md section 2). */
export class Profile extends PersonFields {
  @IsUUID()
  id: string;

  @IsString()
  @Nullable()
  avatar_url: string | null;

  @IsUUID()
  @Nullable()
  default_tenant_id: string | null;

  @NestedList(() => ProfileTenant)
  tenants: ProfileTenant[];
}

/** `PUT /profile`: the fields given are changed; `null` clears a name or avatar. */
export class UpdateProfileRequest {
  @IsOptional()
  @IsString()
  @MaxLength(100)
  first_name?: string | null;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  last_name?: string | null;

  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true })
  @MaxLength(2048)
  avatar_url?: string | null;

  /** Must be a tenant the caller belongs to. */
  @IsOptional()
  @IsUUID()
  default_tenant_id?: string | null;
}

export const TENANT_INVITATION_STATUSES = ['pending', 'accepted', 'declined', 'revoked', 'expired'] as const;
export type TenantInvitationStatus = (typeof TENANT_INVITATION_STATUSES)[number];

/** An invitation to a tenant, as its admins and its addressee see it (never with its token). */
export class TenantInvitation {
  @IsUUID()
  id: string;

  @IsUUID()
  tenant_id: string;

  /** The tenant's name (shown to the addressee, who cannot read the tenant yet). */
  @IsString()
  tenant_name: string;

  @IsString()
  email: string;

  @IsIn(TENANT_ROLES)
  role: TenantRole;

  @IsIn(TENANT_INVITATION_STATUSES)
  status: TenantInvitationStatus;

  @Nullable()
  @IsUUID()
  invited_by: string | null;

  @IsISO8601()
  created_at: string;

  @IsISO8601()
  expires_at: string;
}

export const TenantInvitationList = PageOf(TenantInvitation, 'TenantInvitationList');
export type TenantInvitationList = Page<TenantInvitation>;

/** `POST /tenant-invitations/accept|decline`: the token of the invitation's email. */
export class TenantInvitationTokenRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  token: string;
}
