import type { BomWarning, CurrencyAmount } from '@hwp/contracts';
import {
  addScaled,
  amounts,
  bySortIndex,
  type LineRow,
  MAX_DEPTH,
  round,
  type TreeRoot,
  warningsOf,
} from './bom-tree';
import { compactRefdes } from './refdes';

/**
 * What every occurrence of a line shares, computed once per line however often a shared
 * sub-assembly repeats it: its compacted designators, its unit rollup and extended cost, its warnings.
 * A line whose subtree met a cycle or the depth limit depends on its path and is computed per
 * occurrence instead (`pathDependent`), as the tree read does.
 */
export interface LineFacts {
  row: LineRow;
  qty: number;
  refdes: string;
  unitRollup: Map<string | null, number>;
  extendedCost: CurrencyAmount[];
  warnings: BomWarning[];
  pathDependent: boolean;
}

/** One occurrence of a line in the expanded tree, depth first in sort order. */
export interface Occurrence {
  facts: LineFacts;
  level: number;
  /** The product of the quantities down the path. */
  extendedQty: number;
  /** 1, 1.1, 1.2, 2, ... */
  itemNumber: string;
  /** The part this occurrence is a line of: the top assembly, or the parent occurrence's part. */
  parentPartNumber: string;
}

/**
 * The tree under a BOM walked without building it: occurrences are yielded one at a time, so an
 * export writes each row as it comes and holds only the distinct lines (hundreds of BOMs' lines)
 * however many lines the expansion has (shared sub-assemblies repeat). Same order, quantities,
 * costs and warnings as `assembleTree`.
 */
export class TreeWalk {
  private readonly topOf = new Map<string, LineRow[]>();
  private readonly nestedUnder = new Map<string, LineRow[]>();
  private readonly childLines = new Map<string, LineRow[]>();
  private readonly memo = new Map<string, LineFacts>();
  /** The assembly part number of each BOM the tree reaches: the root's, and each sub-BOM's part's. */
  readonly assemblyOf = new Map<string, string>();
  /** Whether any line the tree reaches has a unit cost. */
  readonly anyCost: boolean;

  constructor(
    lines: LineRow[],
    private readonly root: TreeRoot,
  ) {
    this.assemblyOf.set(root.id, root.assemblyPartNumber);
    let anyCost = false;
    for (const line of lines) {
      if (line.unit_cost !== null) anyCost = true;
      if (line.sub_bom_id && line.sub_bom_id !== line.bom_id)
        this.assemblyOf.set(line.sub_bom_id, line.part_number);
      const [index, key] = line.parent_item_id
        ? [this.nestedUnder, line.parent_item_id]
        : [this.topOf, line.bom_id];
      const siblings = index.get(key);
      if (siblings) siblings.push(line);
      else index.set(key, [line]);
    }
    for (const siblings of this.topOf.values()) siblings.sort(bySortIndex);
    for (const siblings of this.nestedUnder.values()) siblings.sort(bySortIndex);
    this.anyCost = anyCost;
  }

  /** The lines under a line: nested in its BOM, and the top lines of the BOM its part expands into. */
  private childrenOf(line: LineRow): LineRow[] {
    let children = this.childLines.get(line.id);
    if (!children) {
      const nested = this.nestedUnder.get(line.id) ?? [];
      const sub =
        line.sub_bom_id && line.sub_bom_id !== line.bom_id ? (this.topOf.get(line.sub_bom_id) ?? []) : [];
      children =
        sub.length === 0 ? nested : nested.length === 0 ? sub : [...nested, ...sub].sort(bySortIndex);
      this.childLines.set(line.id, children);
    }
    return children;
  }

  /** Whether the line's children are expanded on this path (not a cycle, not past the depth limit). */
  private expands(line: LineRow, ancestors: string[], level: number): boolean {
    return !ancestors.includes(line.child_part_id) && level < MAX_DEPTH;
  }

  private factsOf(line: LineRow, ancestors: string[], level: number): LineFacts {
    const known = this.memo.get(line.id);
    if (known && !known.pathDependent) return known;
    const cycle = ancestors.includes(line.child_part_id);
    const all = cycle ? [] : this.childrenOf(line);
    const children = level < MAX_DEPTH ? all : [];
    let pathDependent = cycle || children.length !== all.length;
    const unitRollup = new Map<string | null, number>();
    if (children.length > 0) {
      const path = [...ancestors, line.child_part_id];
      for (const child of children) {
        const facts = this.factsOf(child, path, level + 1);
        if (facts.pathDependent) pathDependent = true;
        addScaled(unitRollup, facts.unitRollup, facts.qty);
      }
    } else if (line.unit_cost !== null) {
      unitRollup.set(line.currency, Number(line.unit_cost));
    }
    const qty = Number(line.qty);
    const extended = new Map<string | null, number>();
    addScaled(extended, unitRollup, qty);
    const facts: LineFacts = {
      row: line,
      qty,
      refdes: known?.refdes ?? compactRefdes(line.refdes),
      unitRollup,
      extendedCost: amounts(extended),
      warnings: warningsOf(line, children.length === 0, cycle),
      pathDependent,
    };
    if (!pathDependent) this.memo.set(line.id, facts);
    return facts;
  }

  /** Every occurrence, depth first in sort order (the order of the tree read's `nodes`). */
  *occurrences(): Generator<Occurrence> {
    const top = this.topOf.get(this.root.id) ?? [];
    yield* this.walk(top, [this.root.assemblyPartId], 1, 1, '', this.root.assemblyPartNumber);
  }

  private *walk(
    lines: LineRow[],
    ancestors: string[],
    level: number,
    parentQty: number,
    prefix: string,
    parentPartNumber: string,
  ): Generator<Occurrence> {
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index];
      const facts = this.factsOf(line, ancestors, level);
      const itemNumber = prefix ? `${prefix}.${index + 1}` : String(index + 1);
      const extendedQty = round(parentQty * facts.qty);
      yield { facts, level, extendedQty, itemNumber, parentPartNumber };
      if (this.expands(line, ancestors, level)) {
        const children = this.childrenOf(line);
        if (children.length > 0) {
          const path = [...ancestors, line.child_part_id];
          yield* this.walk(children, path, level + 1, extendedQty, itemNumber, line.part_number);
        }
      }
    }
  }
}
