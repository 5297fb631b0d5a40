import { Type } from 'class-transformer';
import {
  Allow,
  IsArray,
  IsNotEmpty,
  IsNumber,
  IsString,
  IsUUID,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { NestedList } from '../common/schema';
import { BomWorkspaceQuery } from './bom-header.dto';

/** `GET /v1/boms/:id/diff?leftRev&rightRev`: what changed between two revisions of a BOM. */

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
