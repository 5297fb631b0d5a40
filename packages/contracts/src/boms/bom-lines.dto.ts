import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsPositive,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { IsFiniteDecimal } from '../common/decimals';
import { FreeFormObject, NestedList, Nullable } from '../common/schema';
import {
  ALTERNATE_APPROVALS,
  type AlternateApproval,
  BOM_ITEM_OPS,
  MAX_BOM_ITEMS,
  MAX_REFDES_TEXT,
} from './bom-constants';
import { Effectivity } from './bom-effectivity.dto';
import { BomActionRequest } from './bom-header.dto';

/** Changes to a BOM's lines: `POST /v1/boms/:id/items` and a line's alternates. */

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
  @IsFiniteDecimal(6)
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
      { type: 'string', maxLength: MAX_REFDES_TEXT },
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
