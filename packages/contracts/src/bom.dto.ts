import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { ApprovalFields } from './approval.dto';
import { ErrorBodyDto } from './error-body.dto';
import { type Items, ItemsOf, type Page, PageOf, PageQuery } from './paging';
import { PART_VERSION_STATUSES, type PartVersionStatus } from './part-constants';
import { ImportRowProblem } from './part-import.dto';
import { FreeFormObject, NestedList, Nullable } from './schema';

/** BOM contracts (sections 2.9 and 4.7 of the interface; DECISIONS.md sections 0 and 5). */

export const BOM_TYPES = ['engineering', 'manufacturing'] as const;
export type BomType = (typeof BOM_TYPES)[number];
export type BomStatus = PartVersionStatus;
export const BOM_STATUSES = PART_VERSION_STATUSES;
export const ALTERNATE_APPROVALS = ['approved', 'conditional', 'rejected'] as const;
export type AlternateApproval = (typeof ALTERNATE_APPROVALS)[number];
export const BOM_ITEM_OPS = ['upsert', 'delete'] as const;
/** Items of one BOM document; one `POST /items` call changes at most this many lines. */
export const MAX_BOM_ITEMS = 10_000;
/** Reference designators one line may expand to (`R1-R5000`). */
export const MAX_REFDES = 10_000;
/** Reference designators one import file or one change of lines may hold in all (counted before expanding). */
export const MAX_REFDES_PER_BOM = 100_000;

/** Snake_case spellings of the interface document accepted on BOM requests (DECISIONS.md section 0). */
export const BOM_SNAKE_CASE_FIELDS = {
  assembly_part_id: 'assemblyPartId',
  assembly_version_id: 'assemblyVersionId',
  change_note: 'changeNote',
  parent_item_id: 'parentItemId',
  child_part_id: 'childPartId',
  child_part_number: 'childPartNumber',
  child_version_id: 'childVersionId',
  sort_index: 'sortIndex',
  date_from: 'dateFrom',
  date_to: 'dateTo',
  serial_from: 'serialFrom',
  serial_to: 'serialTo',
  lot_from: 'lotFrom',
  lot_to: 'lotTo',
  part_id: 'partId',
  item_id: 'itemId',
} as const;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Effectivity of a line: by build date, by serial number and by lot; each range open at either end. */
export class Effectivity {
  @IsOptional()
  @Matches(ISO_DATE, { message: 'must be an ISO date (YYYY-MM-DD)' })
  @Nullable()
  dateFrom?: string | null;

  @IsOptional()
  @Matches(ISO_DATE, { message: 'must be an ISO date (YYYY-MM-DD)' })
  @Nullable()
  dateTo?: string | null;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Nullable()
  serialFrom?: number | null;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Nullable()
  serialTo?: number | null;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Nullable()
  lotFrom?: string | null;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Nullable()
  lotTo?: string | null;
}

/** An alternate part for a line, with its approval. */
export class AlternateInput {
  @IsUUID()
  partId: string;

  @IsIn(ALTERNATE_APPROVALS)
  approval: AlternateApproval;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  rationale?: string;
}

/** One line of `POST /v1/boms/:id/items` (section 2.9). */
export class BomItemInput extends Effectivity {
  /** Updates that line of this BOM; a new id (a UUID) creates the line under it, so later lines can nest under it. */
  @IsOptional()
  @IsUUID()
  id?: string;

  /** `upsert` (default) or `delete` (needs `id`). */
  @IsOptional()
  @IsIn(BOM_ITEM_OPS)
  _op?: 'upsert' | 'delete';

  /** A line of this BOM the line nests under (a group inside the document). */
  @IsOptional()
  @IsUUID()
  @Nullable()
  parentItemId?: string | null;

  /** The child part, by id or (`childPartNumber`) by number; one is needed to create a line. */
  @IsOptional()
  @IsUUID()
  childPartId?: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  childPartNumber?: string;

  @IsOptional()
  @IsUUID()
  @Nullable()
  childVersionId?: string | null;

  /** Quantity per parent, > 0; needed to create a line. */
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 6 })
  @IsPositive()
  @Max(1e12)
  qty?: number;

  /** Default `each`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(16)
  uom?: string;

  /** Reference designators: `R1, R3-R5` or a list; ranges expand (`R3-R5` = R3, R4, R5). */
  @IsOptional()
  @JSONSchema({
    anyOf: [
      { type: 'string', maxLength: 20000 },
      { type: 'array', items: { type: 'string', maxLength: 64 } },
    ],
  })
  refdes?: string | string[];

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  notes?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000_000)
  sortIndex?: number;

  /** Free attributes; `phantom: true` marks a phantom sub-assembly (flattened by derive-mbom). */
  @IsOptional()
  @FreeFormObject()
  attributes?: Record<string, unknown>;

  /** Replaces the line's alternates (as `POST .../alternates` does). */
  @IsOptional()
  @NestedList(() => AlternateInput)
  @ArrayMaxSize(50)
  alternates?: AlternateInput[];
}

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

export class UpsertBomItemsRequest extends BomActionRequest {
  @IsArray()
  @ArrayMaxSize(MAX_BOM_ITEMS)
  @ValidateNested({ each: true })
  @Type(() => BomItemInput)
  items: BomItemInput[];
}

export class SetAlternatesRequest extends BomActionRequest {
  @NestedList(() => AlternateInput)
  @ArrayMaxSize(50)
  alternates: AlternateInput[];
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

export class ValidateEffectivityRequest extends BomActionRequest {
  @ValidateNested()
  @Type(() => Effectivity)
  effectivity: Effectivity;

  /** The line the effectivity is meant for (it is not compared with itself). */
  @IsOptional()
  @IsUUID()
  itemId?: string;

  /** The child part, when no line exists yet (else the line's part). */
  @IsOptional()
  @IsUUID()
  partId?: string;

  /** Reference designators to compare with (else the line's). */
  @IsOptional()
  @JSONSchema({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  refdes?: string | string[];

  /** The parent line inside the document (else the line's; none: the top level). */
  @IsOptional()
  @IsUUID()
  @Nullable()
  parentItemId?: string | null;
}

export class BomDiffQuery extends BomWorkspaceQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  leftRev: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  rightRev: string;
}

/** An alternate as stored: who proposed it and, once approved, who approved it. */
export class BomAlternate {
  @IsUUID()
  partId: string;

  @IsString()
  partNumber: string;

  @IsIn(ALTERNATE_APPROVALS)
  approval: AlternateApproval;

  @IsString()
  rationale: string;

  @IsString()
  proposedBy: string;

  @IsString()
  @Nullable()
  approvedBy: string | null;
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

/** Why a line needs attention: `non_compliant`, `missing_cost`, `refdes_mismatch`, `cycle`. */
export class BomWarning {
  @IsIn(['non_compliant', 'missing_cost', 'refdes_mismatch', 'cycle'])
  code: 'non_compliant' | 'missing_cost' | 'refdes_mismatch' | 'cycle';

  @IsString()
  message: string;
}

/** An amount in one currency (`null`: costs stored without a currency). */
export class CurrencyAmount {
  @IsString()
  @Nullable()
  currency: string | null;

  @IsNumber()
  amount: number;
}

/**
 * One node of the expanded tree, depth first in sort order. `level` 1 is a line of this BOM; deeper
 * nodes are lines nested inside the document or lines of a child part's own BOM (`bomId` says which).
 */
export class BomNode extends Effectivity {
  /** The node's place in the tree: the item ids from the top, joined by `/` (unique in the tree). */
  @IsString()
  nodeId: string;

  @IsString()
  @Nullable()
  parentNodeId: string | null;

  @IsUUID()
  itemId: string;

  /** The line's id, as `items[].id` of the upsert takes it (section 2.9; the same as `itemId`). */
  @IsUUID()
  id: string;

  /** The BOM the line is stored in. */
  @IsUUID()
  bomId: string;

  @IsString()
  bomRevision: string;

  @IsInt()
  level: number;

  @IsUUID()
  @Nullable()
  parentItemId: string | null;

  @IsUUID()
  childPartId: string;

  @IsString()
  partNumber: string;

  @IsString()
  name: string;

  @IsUUID()
  @Nullable()
  childVersionId: string | null;

  /** Quantity per parent. */
  @IsNumber()
  qty: number;

  /** Quantity per one of the top assembly (the product of the quantities on the path). */
  @IsNumber()
  extendedQty: number;

  @IsString()
  uom: string;

  /** Reference designators as section 2.9 has them, a string, runs compacted (`R1-R4, C7`). */
  @IsString()
  refdes: string;

  /** The same designators, one by one. */
  @IsArray()
  @IsString({ each: true })
  designators: string[];

  @IsString()
  notes: string;

  @IsInt()
  sortIndex: number;

  @FreeFormObject()
  attributes: Record<string, unknown>;

  @NestedList(() => BomAlternate)
  alternates: BomAlternate[];

  /** The child part's own BOM expanded under this node, if any. */
  @IsUUID()
  @Nullable()
  subBomId: string | null;

  @IsNumber()
  @Nullable()
  unitCost: number | null;

  @IsString()
  @Nullable()
  currency: string | null;

  /** qty x the child's unit cost (its own BOM's rollup when it has one), per currency. */
  @NestedList(() => CurrencyAmount)
  extendedCost: CurrencyAmount[];

  @NestedList(() => BomWarning)
  warnings: BomWarning[];
}

/** `GET /v1/boms/:id`: the header and the expanded tree. */
export class BomDetail extends Bom {
  @NestedList(() => BomNode)
  tree: BomNode[];
}

export class MissingCost {
  @IsString()
  nodeId: string;

  @IsUUID()
  partId: string;

  @IsString()
  partNumber: string;

  /** Part numbers from the top assembly down to this part. */
  @IsArray()
  @IsString({ each: true })
  path: string[];
}

/** `GET /v1/boms/:id/cost-rollup`: one top assembly's cost, per currency (never converted). */
export class CostRollup {
  @IsUUID()
  bomId: string;

  @IsString()
  assemblyPartNumber: string;

  @NestedList(() => CurrencyAmount)
  totals: CurrencyAmount[];

  /**
   * The totals in the base currency of the workspace's `currencyRates` (BOM settings); null when no
   * rates are set or a currency has none (listed in `unconverted`).
   */
  @ValidateNested()
  @Type(() => CurrencyAmount)
  @Nullable()
  converted: CurrencyAmount | null;

  /** Currencies of the totals without a rate (`none` for costs stored without a currency). */
  @IsArray()
  @IsString({ each: true })
  unconverted: string[];

  /** True when every leaf has a cost. */
  @IsBoolean()
  complete: boolean;

  @NestedList(() => MissingCost)
  missingCosts: MissingCost[];

  /** Direct lines: qty x their unit rollup. */
  @NestedList(() => BomNode)
  lines: BomNode[];
}

export class FieldChange {
  @IsString()
  field: string;

  /** The value in the left revision (any JSON value). */
  @Allow()
  @JSONSchema({ description: 'The value in the left revision (any JSON value)' })
  from: unknown;

  @Allow()
  @JSONSchema({ description: 'The value in the right revision (any JSON value)' })
  to: unknown;
}

/** A line of a diff, keyed by the child part number (and the reference designators when the part repeats). */
export class BomDiffLine {
  @IsString()
  key: string;

  @IsString()
  partNumber: string;

  @IsArray()
  @IsString({ each: true })
  refdes: string[];

  @IsNumber()
  qty: number;

  @IsString()
  uom: string;
}

export class BomDiffChange extends BomDiffLine {
  @NestedList(() => FieldChange)
  changes: FieldChange[];
}

export class BomRevisionRef {
  @IsUUID()
  id: string;

  @IsString()
  revision: string;
}

export class BomDiff {
  @ValidateNested()
  @Type(() => BomRevisionRef)
  left: BomRevisionRef;

  @ValidateNested()
  @Type(() => BomRevisionRef)
  right: BomRevisionRef;

  @NestedList(() => BomDiffLine)
  added: BomDiffLine[];

  @NestedList(() => BomDiffLine)
  removed: BomDiffLine[];

  @NestedList(() => BomDiffChange)
  changed: BomDiffChange[];
}

/** A line whose effectivity overlaps the one checked. */
export class EffectivityOverlap extends Effectivity {
  @IsUUID()
  itemId: string;

  @IsString()
  partNumber: string;

  @IsArray()
  @IsString({ each: true })
  refdes: string[];

  /** What overlaps: `date`, `serial`, `lot` (each range that intersects). */
  @IsArray()
  @IsString({ each: true })
  dimensions: string[];

  @IsString()
  message: string;
}

export class EffectivityReport {
  @IsBoolean()
  valid: boolean;

  @NestedList(() => EffectivityOverlap)
  overlaps: EffectivityOverlap[];
}

/** An assembly that uses the part (directly, or through the assemblies in `path`). */
export class WhereUsedEntry {
  @IsUUID()
  bomId: string;

  @IsUUID()
  assemblyPartId: string;

  @IsString()
  assemblyPartNumber: string;

  @IsString()
  revision: string;

  @IsIn(BOM_TYPES)
  type: BomType;

  @IsIn(BOM_STATUSES)
  status: BomStatus;

  /** 1: the assembly's BOM lists the part; 2: it lists an assembly that does; ... */
  @IsInt()
  level: number;

  /** How many of the part one assembly takes along this path. */
  @IsNumber()
  qty: number;

  /** Part numbers from this assembly down to the part. */
  @IsArray()
  @IsString({ each: true })
  path: string[];
}

export const WhereUsedList = ItemsOf(WhereUsedEntry, 'WhereUsedList');
export type WhereUsedList = Items<WhereUsedEntry>;

export class WhereUsedQuery {
  /** The part's workspace; the part id names it already, so it may be left out. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace?: string;

  /** `1` (default): the assemblies that list the part; `all`: up to the top assemblies. */
  @IsOptional()
  @IsIn(['1', 'all'])
  levels?: '1' | 'all';
}

/** Form fields of `POST /v1/boms/import`. */
export class ImportBomForm extends BomWorkspaceQuery {
  @IsUUID()
  bomId: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  dryRun?: 'true' | 'false';

  @IsOptional()
  @IsIn(['dot', 'comma'])
  decimal?: 'dot' | 'comma';
}

/** What a BOM import found (dry run) or did (apply): the lines replace the BOM's lines. */
export class BomImportReport {
  @IsUUID()
  importId: string;

  @IsUUID()
  bomId: string;

  @IsBoolean()
  dryRun: boolean;

  @IsIn(['csv', 'xlsx'])
  format: 'csv' | 'xlsx';

  @IsInt()
  rows: number;

  @IsInt()
  valid: number;

  @NestedList(() => ImportRowProblem)
  errors: ImportRowProblem[];

  @IsInt()
  errorCount: number;

  /** Designator counts that do not match the quantity, and the like: the rows import. */
  @NestedList(() => ImportRowProblem)
  warnings: ImportRowProblem[];

  /** Lines the BOM holds after the import (dry run: would hold). */
  @IsInt()
  lines: number;

  /** Part numbers not in the workspace, created with domain `other` (dry run: to be created). */
  @IsArray()
  @IsString({ each: true })
  createdParts: string[];

  /** Rows of sub-assemblies' own BOMs in a hierarchical export: not lines of this BOM, skipped. */
  @IsInt()
  skippedRows: number;

  @IsArray()
  @IsString({ each: true })
  ignoredColumns: string[];
}

/** `400` of a BOM import with row errors: nothing written, the report says why. */
export class BomImportRejectedBody extends ErrorBodyDto {
  @IsOptional()
  @ValidateNested()
  @Type(() => BomImportReport)
  report?: BomImportReport;
}
