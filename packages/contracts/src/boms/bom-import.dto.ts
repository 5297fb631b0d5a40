import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  ValidateNested,
} from 'class-validator';
import { ErrorBodyDto } from '../common/error-body.dto';
import { NestedList } from '../common/schema';
import { type ImportReportBase, ImportRowProblem } from '../parts/part-import.dto';
import { BomWorkspaceQuery } from './bom-header.dto';

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
export class BomImportReport implements ImportReportBase {
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
