import { IsIn, IsInt, IsISO8601, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { type Page, PageOf, PageQuery } from '../common/paging';
import { Nullable } from '../common/schema';
import { ApprovalFields } from '../parts/approval.dto';
import { BOM_STATUSES, BOM_TYPES, type BomStatus, type BomType } from './bom-constants';

/** A BOM document's header: create, list, the approval flow's bodies, derive, and the header itself. */

/** `POST /v1/boms` (engineer+). */
export class CreateBomRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  @IsUUID()
  assemblyPartId: string;

  @IsOptional()
  @IsUUID()
  @Nullable()
  assemblyVersionId?: string | null;

  @IsIn(BOM_TYPES)
  type: BomType;

  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  revision: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  changeNote?: string;
}

/** `GET /v1/boms`. */
export class ListBomsQuery extends PageQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  @IsOptional()
  @IsIn(BOM_TYPES)
  type?: BomType;

  @IsOptional()
  @IsIn(BOM_STATUSES)
  status?: BomStatus;

  @IsOptional()
  @IsUUID()
  assemblyPartId?: string;

  /** The assembly's part number (case-insensitive, exact). */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  assemblyPn?: string;
}

/** `?workspace` of the routes on one BOM (for writes it may be in the body instead). */
export class BomWorkspaceQuery {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;
}

/** Body of submit and approve: the workspace, unless it is in the query. */
export class BomActionRequest extends BomWorkspaceQuery {}

export class RejectBomRequest extends BomActionRequest {
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string;
}

export class DeriveMbomRequest extends BomActionRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  revision: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  changeNote?: string;
}

/** A BOM header (no lines). */
export class Bom extends ApprovalFields {
  @IsUUID()
  id: string;

  @IsString()
  workspace: string;

  @IsUUID()
  assemblyPartId: string;

  @IsString()
  assemblyPartNumber: string;

  @IsUUID()
  @Nullable()
  assemblyVersionId: string | null;

  @IsIn(BOM_TYPES)
  type: BomType;

  @IsString()
  revision: string;

  @IsIn(BOM_STATUSES)
  status: BomStatus;

  @IsString()
  @Nullable()
  changeNote: string | null;

  /** The engineering BOM a manufacturing BOM was derived from. */
  @IsUUID()
  @Nullable()
  sourceBomId: string | null;

  @IsInt()
  itemCount: number;

  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  updatedAt: string;
}

export const BomList = PageOf(Bom, 'BomList');
export type BomList = Page<Bom>;
