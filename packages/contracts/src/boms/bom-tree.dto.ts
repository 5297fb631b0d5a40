import { IsArray, IsIn, IsInt, IsNumber, IsString, IsUUID } from 'class-validator';
import { FreeFormObject, NestedList, Nullable } from '../common/schema';
import { ALTERNATE_APPROVALS, type AlternateApproval } from './bom-constants';
import { Effectivity } from './bom-effectivity.dto';
import { Bom } from './bom-header.dto';

/** `GET /v1/boms/:id`: the header with its lines expanded into a tree, costs and warnings on each node. */

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
