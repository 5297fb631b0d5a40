import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsISO8601,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
} from 'class-validator';
import { IsFiniteDecimal } from '../common/decimals';
import { PageOf, PageQuery } from '../common/paging';
import { FreeFormObject, Nullable } from '../common/schema';
import {
  PART_DOMAINS,
  PART_LIFECYCLES,
  PART_NUMBER_PATTERN,
  PART_SORT_KEYS,
  type PartDomain,
  type PartLifecycle,
  type PartSortKey,
} from './part-constants';

/** Fields a part create and update share (section 2.8). */
class PartFields {
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @IsOptional()
  @IsIn(PART_DOMAINS)
  domain?: PartDomain;

  /** Unit of measure; default `each`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  uom?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(64, { each: true })
  tags?: string[];

  /** Checked against the workspace's domain template (section 2.10). */
  @IsOptional()
  @FreeFormObject('Domain attributes, checked against the workspace domain template')
  attributes?: Record<string, unknown>;

  /** Also accepted as `manufacturer_name`. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  manufacturerName?: string;

  /** Also accepted as `manufacturer_part_number`. */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  manufacturerPartNumber?: string;

  /** Cost per part, >= 0; also accepted as `unit_cost`. */
  @IsOptional()
  @IsFiniteDecimal(6)
  @Min(0)
  unitCost?: number;

  /** ISO 4217 code, e.g. `EUR`. */
  @IsOptional()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as EUR' })
  currency?: string;

  /** Also accepted as `rohs_compliant`. */
  @IsOptional()
  @IsBoolean()
  rohsCompliant?: boolean;

  /** Also accepted as `reach_compliant`. */
  @IsOptional()
  @IsBoolean()
  reachCompliant?: boolean;

  /** Conflict mineral status (free text, e.g. `conflict-free`); also accepted as `conflict_minerals`. */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  conflictMinerals?: string;
}

/** `POST /v1/parts` (engineer+). */
export class CreatePartRequest extends PartFields {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  /** Required unless the workspace has a numbering rule for the domain (then the next number is given). */
  @IsOptional()
  @Matches(PART_NUMBER_PATTERN, { message: 'partNumber must be 1-64 letters, digits or . _ / # + -' })
  partNumber?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  /** Default `prototype`; any other value needs manager+. */
  @IsOptional()
  @IsIn(PART_LIFECYCLES)
  lifecycle?: PartLifecycle;
}

/** `PATCH /v1/parts/:id` (engineer+; a lifecycle change needs manager+). */
export class UpdatePartRequest extends PartFields {
  /** Also accepted as the `workspace` query parameter. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @IsOptional()
  @IsIn(PART_LIFECYCLES)
  lifecycle?: PartLifecycle;
}

/** `?workspace` of the part routes that take nothing else. */
export class PartWorkspaceQuery {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;
}

/** `GET /v1/parts`. */
export class ListPartsQuery extends PageQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  /** part_number by prefix, name by containment, manufacturer_part_number by prefix (case-insensitive). */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  @IsOptional()
  @IsIn(PART_DOMAINS)
  domain?: PartDomain;

  @IsOptional()
  @IsIn(PART_LIFECYCLES)
  lifecycle?: PartLifecycle;

  /** Parts whose tag list contains it. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  tag?: string;

  /** Default `part_number`. */
  @IsOptional()
  @IsIn(PART_SORT_KEYS)
  sort?: PartSortKey;

  /** Default `asc`. */
  @IsOptional()
  @IsIn(['asc', 'desc'])
  dir?: 'asc' | 'desc';

  /** `exact`: count every match. By default the total is exact up to 1,000 matches, then estimated. */
  @IsOptional()
  @IsIn(['exact'])
  count?: 'exact';
}

export class Part {
  @IsUUID()
  id: string;

  @IsString()
  workspace: string;

  @IsString()
  partNumber: string;

  @IsString()
  name: string;

  @IsString()
  description: string;

  @IsIn(PART_DOMAINS)
  domain: PartDomain;

  @IsString()
  uom: string;

  @IsIn(PART_LIFECYCLES)
  lifecycle: PartLifecycle;

  @IsString({ each: true })
  tags: string[];

  @FreeFormObject()
  attributes: Record<string, unknown>;

  @IsString()
  @Nullable()
  manufacturerName: string | null;

  @IsString()
  @Nullable()
  manufacturerPartNumber: string | null;

  @IsNumber()
  @Nullable()
  unitCost: number | null;

  @IsString()
  @Nullable()
  currency: string | null;

  @IsBoolean()
  @Nullable()
  rohsCompliant: boolean | null;

  @IsBoolean()
  @Nullable()
  reachCompliant: boolean | null;

  @IsString()
  @Nullable()
  conflictMinerals: string | null;

  /** Username of the creator. */
  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  updatedAt: string;
}

/**
 * A page of parts; `totalExact: false` when `total` is the planner's estimate (over 1,000 matches,
 * unless the page is the last one, cut short: then its offset and rows give the total).
 */
export class PartList extends PageOf(Part, 'PartPage') {
  @IsBoolean()
  totalExact: boolean;
}
