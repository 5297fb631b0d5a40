import {
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
} from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { BOM_STATUSES, BOM_TYPES, type BomStatus, type BomType } from './bom-constants';

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
