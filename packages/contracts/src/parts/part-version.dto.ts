import { IsIn, IsISO8601, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { FreeFormObject, NestedList, Nullable } from '../common/schema';
import { ApprovalFields } from './approval.dto';
import { Part } from './part.dto';
import { PART_VERSION_STATUSES, type PartVersionStatus } from './part-constants';

export class PartVersion extends ApprovalFields {
  @IsUUID()
  id: string;

  @IsUUID()
  partId: string;

  @IsString()
  revision: string;

  @IsIn(PART_VERSION_STATUSES)
  status: PartVersionStatus;

  @IsString()
  @Nullable()
  changeNote: string | null;

  @FreeFormObject()
  data: Record<string, unknown>;

  /** Usernames and times of each step; `null` until it happens. */
  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  updatedAt: string;
}

export const PartVersionList = ItemsOf(PartVersion, 'PartVersionList');
export type PartVersionList = Items<PartVersion>;

/** One audit entry: what changed, by whom, when. `changes` maps a field to `{ from, to }`. */
export class PartHistoryEntry {
  @IsUUID()
  id: string;

  /** Username. */
  @IsString()
  actor: string;

  @IsISO8601()
  at: string;

  /** `created`, `updated`, `lifecycle`, `version.created`, `version.updated`, `version.submitted`, ... */
  @IsString()
  action: string;

  @FreeFormObject('Field -> { from, to }, or the version concerned')
  changes: Record<string, unknown>;
}

/** `GET /v1/parts/:id`: the part with its versions (newest first) and audit history (oldest first). */
export class PartDetail extends Part {
  @NestedList(() => PartVersion)
  versions: PartVersion[];

  @NestedList(() => PartHistoryEntry)
  history: PartHistoryEntry[];
}

/** `POST /v1/parts/:id/versions` (engineer+). */
export class CreatePartVersionRequest {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  revision: string;

  /** Also accepted as `change_note`. */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  changeNote?: string;

  @IsOptional()
  @FreeFormObject()
  data?: Record<string, unknown>;
}

/** `PATCH /v1/parts/:id/versions/:versionId`: edits a draft, or a rejected version (back to draft). */
export class UpdatePartVersionRequest {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  revision?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  changeNote?: string;

  @IsOptional()
  @FreeFormObject()
  data?: Record<string, unknown>;
}

/** Body of submit and approve: the workspace, unless it is in the query. */
export class PartVersionActionRequest {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;
}

/** `POST /v1/parts/:id/versions/:versionId/reject` (manager+). */
export class RejectPartVersionRequest extends PartVersionActionRequest {
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string;
}
