import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { ErrorBodyDto } from '../common/error-body.dto';
import { NestedList } from '../common/schema';

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

  /**
   * CSV: the decimal separator of numeric cells (`unit_cost`): `dot` (default, `1234.5`) or `comma`
   * (`1234,5`, as spreadsheet programs in much of Europe write CSV, with `;` between cells). No
   * thousands separators either way. XLSX cells carry typed numbers and ignore it.
   */
  @IsOptional()
  @IsIn(['dot', 'comma'])
  decimal?: 'dot' | 'comma';
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

/**
 * What the report of every spreadsheet import has, parts (ImportReport) and BOM lines
 * (BomImportReport) alike: the file's facts, the row problems and the columns not read. Each report
 * class declares these fields itself too (their order is the order of its OpenAPI schema).
 */
export interface ImportReportBase {
  importId: string;
  dryRun: boolean;
  format: 'csv' | 'xlsx';
  /** Data rows in the file (header and blank rows not counted). */
  rows: number;
  /** Rows without errors. */
  valid: number;
  /** Row errors, in row order; at most 1,000 are listed (`errorCount` has them all). */
  errors: ImportRowProblem[];
  errorCount: number;
  /** Problems that do not stop a row from importing; at most 1,000 are listed. */
  warnings: ImportRowProblem[];
  /** Headers that name no field (or repeat one), as in the file: their values are not read. */
  ignoredColumns: string[];
}

/** What an import found (dry run) or did (apply). */
export class ImportReport implements ImportReportBase {
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

/**
 * `400` of an import: applied with row errors (nothing was written; `report` says why), or a
 * request that is itself invalid (no file, a bad form field; no `report`).
 */
export class ImportRejectedBody extends ErrorBodyDto {
  @IsOptional()
  @ValidateNested()
  @Type(() => ImportReport)
  report?: ImportReport;
}

/** `data` of an `import.progress` event (sent to the importing user only). */
export interface ImportProgressData {
  importId: string;
  /** What is imported: `parts` (BOM imports use the same event). */
  kind: 'parts';
  dryRun: boolean;
  /**
   * parsing -> checking -> writing (apply only) -> done, or failed at any point. The stages run at
   * once on batches of the file: the phase is the earliest one still running.
   */
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
