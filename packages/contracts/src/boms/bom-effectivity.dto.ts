import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { NestedList, Nullable } from '../common/schema';
import { BomActionRequest } from './bom-header.dto';

/** Effectivity of BOM lines, and the check of one against the other lines (section 2.9). */

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

export class ValidateEffectivityRequest extends BomActionRequest {
  @IsDefined()
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
