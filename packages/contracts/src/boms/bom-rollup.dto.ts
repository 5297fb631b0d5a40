import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsString, IsUUID, ValidateNested } from 'class-validator';
import { NestedList, Nullable } from '../common/schema';
import { BomNode, CurrencyAmount } from './bom-tree.dto';

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
