import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { ErrorBodyDto } from './error-body.dto';
import { type Items, ItemsOf, type Page, PageOf, PageQuery } from './paging';
import { FreeFormObject, NestedList, Nullable } from './schema';

/** Part domains (section 2.8); `other` is the default. */
export const PART_DOMAINS = ['mechanical', 'electronic', 'electrical', 'chemical', 'other'] as const;
export type PartDomain = (typeof PART_DOMAINS)[number];

/** Part lifecycle values (section 3.3); `prototype` is the default. */
export const PART_LIFECYCLES = ['prototype', 'released', 'on_hold', 'obsolete'] as const;
export type PartLifecycle = (typeof PART_LIFECYCLES)[number];

/** Lifecycle moves allowed through PATCH by a manager+ (DECISIONS.md section 5); `obsolete` is final. */
export const PART_LIFECYCLE_MOVES: Record<PartLifecycle, readonly PartLifecycle[]> = {
  prototype: ['released', 'obsolete'],
  released: ['on_hold', 'obsolete'],
  on_hold: ['released', 'obsolete'],
  obsolete: [],
};

/** Part version statuses (DECISIONS.md section 5): draft -> in_review -> approved | rejected -> draft. */
export const PART_VERSION_STATUSES = ['draft', 'in_review', 'approved', 'rejected'] as const;
export type PartVersionStatus = (typeof PART_VERSION_STATUSES)[number];

/** Sort keys of `GET /v1/parts` (section 4.6). */
export const PART_SORT_KEYS = [
  'part_number',
  'name',
  'domain',
  'lifecycle',
  'manufacturer_part_number',
  'updated_at',
] as const;
export type PartSortKey = (typeof PART_SORT_KEYS)[number];

/**
 * The snake_case spellings of request fields the interface document names (DECISIONS.md section 0),
 * with their camelCase names. Requests may use either; the route renames before validation.
 */
export const PART_SNAKE_CASE_FIELDS: Record<string, string> = {
  part_number: 'partNumber',
  unit_cost: 'unitCost',
  rohs_compliant: 'rohsCompliant',
  reach_compliant: 'reachCompliant',
  conflict_minerals: 'conflictMinerals',
  manufacturer_name: 'manufacturerName',
  manufacturer_part_number: 'manufacturerPartNumber',
  change_note: 'changeNote',
  numbering_rules: 'numberingRules',
  domain_templates: 'domainTemplates',
};

/** Part numbers: printable, no surrounding spaces. */
export const PART_NUMBER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/#+-]{0,63}$/;

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
  @IsObject()
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
  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 6 })
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

export const PartList = PageOf(Part, 'PartList');
export type PartList = Page<Part>;

export class PartVersion {
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

  @IsString()
  @Nullable()
  submittedBy: string | null;

  @IsISO8601()
  @Nullable()
  submittedAt: string | null;

  @IsString()
  @Nullable()
  approvedBy: string | null;

  @IsISO8601()
  @Nullable()
  approvedAt: string | null;

  @IsString()
  @Nullable()
  rejectedBy: string | null;

  @IsISO8601()
  @Nullable()
  rejectedAt: string | null;

  @IsString()
  @Nullable()
  rejectionReason: string | null;
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
  @IsObject()
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
  @IsObject()
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

/** An assembly whose BOM references the part. */
export class WhereUsedEntry {
  @IsUUID()
  bomId: string;

  @IsUUID()
  assemblyPartId: string;

  @IsString()
  assemblyPartNumber: string;

  @IsString()
  revision: string;
}

export const WhereUsedList = ItemsOf(WhereUsedEntry, 'WhereUsedList');
export type WhereUsedList = Items<WhereUsedEntry>;

/** A numbering rule: `<prefix><zero-padded sequence of width digits>`, e.g. `MEC-` + 5 -> `MEC-00042`. */
export interface NumberingRule {
  prefix: string;
  width: number;
}

/**
 * A domain template (section 2.10): `required` attributes, refused when missing if `enforce`, else
 * reported as warnings (import); `schema` a JSON Schema the attributes must satisfy.
 */
export interface DomainTemplate {
  required: string[];
  enforce: boolean;
  schema?: Record<string, unknown>;
}

/** `POST /v1/workspaces/:name/bom-settings` (manager+): each field given replaces the stored one. */
export class UpdateBomSettingsRequest {
  /** Per domain `{ prefix, width }`; also accepted as `numbering_rules`. */
  @IsOptional()
  @IsObject()
  @FreeFormObject('Per domain: { prefix, width }')
  numberingRules?: Partial<Record<PartDomain, NumberingRule>>;

  /** Per domain `{ required, enforce, schema? }`; also accepted as `domain_templates`. */
  @IsOptional()
  @IsObject()
  @FreeFormObject('Per domain: { required: string[], enforce: boolean, schema?: JSON Schema }')
  domainTemplates?: Partial<Record<PartDomain, DomainTemplate>>;
}

export class BomSettings {
  @IsString()
  workspace: string;

  @FreeFormObject('Per domain: { prefix, width }')
  numberingRules: Partial<Record<PartDomain, NumberingRule>>;

  @FreeFormObject('Per domain: { required, enforce, schema? }')
  domainTemplates: Partial<Record<PartDomain, DomainTemplate>>;

  /** `null` while the defaults apply. */
  @IsISO8601()
  @Nullable()
  updatedAt: string | null;

  @IsString()
  @Nullable()
  updatedBy: string | null;
}

/**
 * Form fields of `POST /v1/parts/import` (multipart/form-data; the spreadsheet is the `file` part).
 * `workspace` may be given as a query parameter instead.
 */
export class ImportPartsForm {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;

  /** `true`: check every row and report, write nothing. Default `false`. Also accepted as `dry_run`. */
  @IsOptional()
  @IsIn(['true', 'false'])
  dryRun?: 'true' | 'false';
}

/** A problem with one cell or row of an import; `row` is the 1-based row in the file (header = 1). */
export class ImportRowProblem {
  @IsInt()
  row: number;

  /** The column's header as in the file, or the field name when the file has no such column. */
  @IsString()
  column: string;

  @IsString()
  message: string;
}

/** What an import found (dry run) or did (apply). */
export class ImportReport {
  @IsUUID()
  importId: string;

  @IsBoolean()
  dryRun: boolean;

  @IsIn(['csv', 'xlsx'])
  format: 'csv' | 'xlsx';

  /** Data rows in the file (header and blank rows not counted). */
  @IsInt()
  rows: number;

  /** Rows without errors. */
  @IsInt()
  valid: number;

  /** Row errors, in row order; at most 1,000 are listed (`errorCount` has them all). */
  @NestedList(() => ImportRowProblem)
  errors: ImportRowProblem[];

  @IsInt()
  errorCount: number;

  /** Domain warnings (e.g. an electronic part without `package`): not errors, the rows import. At most 1,000. */
  @NestedList(() => ImportRowProblem)
  warnings: ImportRowProblem[];

  @IsInt()
  warningCount: number;

  /** Parts created (dry run: that would be created) by valid rows. */
  @IsInt()
  created: number;

  /** Existing parts changed (dry run: that would change). */
  @IsInt()
  updated: number;

  /** Rows naming an existing part with nothing different: not written. */
  @IsInt()
  unchanged: number;

  /** Headers that name no part field (or repeat one), as in the file: their values are not read. */
  @IsArray()
  @IsString({ each: true })
  ignoredColumns: string[];
}

/** `400` of an import applied with row errors: nothing was written; the report says why. */
export class ImportRejectedBody extends ErrorBodyDto {
  @ValidateNested()
  @Type(() => ImportReport)
  report: ImportReport;
}

/** `data` of an `import.progress` event (sent to the importing user only). */
export interface ImportProgressData {
  importId: string;
  /** What is imported: `parts` (BOM imports use the same event). */
  kind: 'parts';
  dryRun: boolean;
  /** parsing -> checking -> writing (apply only) -> done, or failed at any point. */
  phase: 'parsing' | 'checking' | 'writing' | 'done' | 'failed';
  /** Rows handled so far in this phase. */
  processed: number;
  /** Data rows in the file, once known. */
  total?: number;
  /** `done`: the report's counts; `failed`: why. */
  created?: number;
  updated?: number;
  unchanged?: number;
  errorCount?: number;
  detail?: string;
}
