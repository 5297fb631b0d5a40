import type { BomNode, BomWarning, CurrencyAmount } from '@hwp/contracts';
import {
  addScaled,
  amounts,
  bySortIndex,
  type LineRow,
  MAX_DEPTH,
  round,
  rowNodeFields,
  type TreeRoot,
  warningsOf,
} from './bom-tree';
import { compactRefdes } from './refdes';

/**
 * What every occurrence of a line shares, computed once per line however often a shared
 * sub-assembly repeats it: its compacted designators, its unit rollup and extended cost, its warnings.
 * Only in a tree without cycles: where a part contains itself (planted in the database; writes
 * refuse it), whether a line is marked depends on its path, and every occurrence is computed on its
 * own, as the tree read does. A subtree cut by the depth limit is not reused either.
 */
export interface LineFacts {
  row: LineRow;
  qty: number;
  refdes: string;
  unitRollup: Map<string | null, number>;
  extendedCost: CurrencyAmount[];
  warnings: BomWarning[];
  /** The line's part is on its own path: marked, not expanded. */
  cycle: boolean;
  pathDependent: boolean;
  /** Levels below the line (0 for a leaf): a reuse deeper down must stay within MAX_DEPTH. */
  height: number;
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
  /** The path of line ids from the top (`line/line/...`), unique per occurrence; its parent's. */
  nodeId: string;
  parentNodeId: string | null;
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
  /** No part contains itself anywhere in the tree, so a line's facts do not depend on its path. */
  private readonly acyclic: boolean;

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
    this.acyclic = !partsCycle(lines, root);
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
    const known = this.acyclic ? this.memo.get(line.id) : undefined;
    if (known && !known.pathDependent && level + known.height <= MAX_DEPTH) return known;
    const cycle = ancestors.includes(line.child_part_id);
    const all = cycle ? [] : this.childrenOf(line);
    const children = level < MAX_DEPTH ? all : [];
    let pathDependent = children.length !== all.length;
    let height = 0;
    const unitRollup = new Map<string | null, number>();
    if (children.length > 0) {
      const path = [...ancestors, line.child_part_id];
      for (const child of children) {
        const facts = this.factsOf(child, path, level + 1);
        if (facts.pathDependent) pathDependent = true;
        height = Math.max(height, facts.height + 1);
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
      cycle,
      pathDependent,
      height,
    };
    if (this.acyclic && !pathDependent) this.memo.set(line.id, facts);
    return facts;
  }

  /**
   * How many occurrences the walk would yield (a shared sub-assembly counts each time it occurs),
   * counted without yielding them, in at most `limit` steps: past `limit` the answer is `limit + 1`.
   * Without cycles a line's count is kept for its next occurrence (unless the depth limit cut it).
   */
  countOccurrences(limit: number): number {
    const memo = new Map<string, number>();
    let steps = 0;
    const count = (line: LineRow, ancestors: string[], level: number): { size: number; cut: boolean } => {
      if (++steps > limit) return { size: limit + 1, cut: false };
      const known = memo.get(line.id);
      if (known !== undefined) return { size: known, cut: false };
      let size = 1;
      let cut = level >= MAX_DEPTH && this.childrenOf(line).length > 0;
      if (this.expands(line, ancestors, level)) {
        const path = [...ancestors, line.child_part_id];
        for (const child of this.childrenOf(line)) {
          const under = count(child, path, level + 1);
          size = Math.min(limit + 1, size + under.size);
          cut ||= under.cut;
          if (size > limit) break;
        }
      }
      if (this.acyclic && !cut) memo.set(line.id, size);
      return { size, cut };
    };
    let total = 0;
    for (const line of this.topOf.get(this.root.id) ?? []) {
      total += count(line, [this.root.assemblyPartId], 1).size;
      if (total > limit) return limit + 1;
    }
    return total;
  }

  /**
   * Every occurrence, depth first in sort order (the order of the tree read's `nodes`). One generator
   * over an explicit stack: nested `yield*` would pass each of 20,000 occurrences up through every
   * level's generator (a third of a tree read's time in bench/bom).
   */
  *occurrences(): Generator<Occurrence> {
    const stack: Frame[] = [
      {
        lines: this.topOf.get(this.root.id) ?? [],
        next: 0,
        ancestors: [this.root.assemblyPartId],
        level: 1,
        parentQty: 1,
        prefix: '',
        parentPartNumber: this.root.assemblyPartNumber,
        parentNodeId: null,
      },
    ];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.next === frame.lines.length) {
        stack.pop();
        continue;
      }
      const index = frame.next++;
      const line = frame.lines[index];
      const { ancestors, level, parentNodeId } = frame;
      const facts = this.factsOf(line, ancestors, level);
      const itemNumber = frame.prefix ? `${frame.prefix}.${index + 1}` : String(index + 1);
      const extendedQty = round(frame.parentQty * facts.qty);
      const nodeId = parentNodeId ? `${parentNodeId}/${line.id}` : line.id;
      yield {
        facts,
        level,
        extendedQty,
        itemNumber,
        parentPartNumber: frame.parentPartNumber,
        nodeId,
        parentNodeId,
      };
      if (!this.expands(line, ancestors, level)) continue;
      const children = this.childrenOf(line);
      if (children.length === 0) continue;
      stack.push({
        lines: children,
        next: 0,
        ancestors: [...ancestors, line.child_part_id],
        level: level + 1,
        parentQty: extendedQty,
        prefix: itemNumber,
        parentPartNumber: line.part_number,
        parentNodeId: nodeId,
      });
    }
  }
}

/** The siblings being walked at one level, and what their occurrences inherit from the path. */
interface Frame {
  lines: LineRow[];
  /** The index of the next sibling to yield. */
  next: number;
  ancestors: string[];
  level: number;
  parentQty: number;
  prefix: string;
  parentPartNumber: string;
  parentNodeId: string | null;
}

/**
 * Whether a part contains itself somewhere under the root: the graph from each BOM's assembly part to
 * the parts of its top lines, and from each line's part to the parts of the lines nested under it,
 * has a cycle reachable from the root's part (depth first, iteratively).
 */
function partsCycle(lines: LineRow[], root: TreeRoot): boolean {
  const partOfBom = new Map<string, string>([[root.id, root.assemblyPartId]]);
  for (const line of lines) if (line.sub_bom_id) partOfBom.set(line.sub_bom_id, line.child_part_id);
  const partOfLine = new Map(lines.map((line) => [line.id, line.child_part_id]));
  const edges = new Map<string, string[]>();
  for (const line of lines) {
    // A nested line sits under its parent line's part; a top line under its BOM's assembly.
    const from = line.parent_item_id ? partOfLine.get(line.parent_item_id) : partOfBom.get(line.bom_id);
    if (from === undefined) continue;
    const targets = edges.get(from);
    if (targets) targets.push(line.child_part_id);
    else edges.set(from, [line.child_part_id]);
  }
  const state = new Map<string, 'open' | 'done'>();
  const stack: { part: string; next: number }[] = [{ part: root.assemblyPartId, next: 0 }];
  state.set(root.assemblyPartId, 'open');
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const targets = edges.get(top.part) ?? [];
    if (top.next === targets.length) {
      state.set(top.part, 'done');
      stack.pop();
      continue;
    }
    const target = targets[top.next++];
    const seen = state.get(target);
    if (seen === 'open') return true;
    if (seen === undefined) {
      state.set(target, 'open');
      stack.push({ part: target, next: 0 });
    }
  }
  return false;
}

/** What a node of the tree read shows of its line: the same in every occurrence of the line. */
export type LineNodeFields = Omit<BomNode, 'nodeId' | 'parentNodeId' | 'level' | 'extendedQty'>;

export function lineNodeFields(facts: LineFacts): LineNodeFields {
  return rowNodeFields(facts.row, facts.refdes, facts.cycle, facts.extendedCost, facts.warnings);
}

/** The node of the tree read for one occurrence. */
export function nodeOf(occurrence: Occurrence, fields: LineNodeFields): BomNode {
  const { nodeId, parentNodeId, level, extendedQty } = occurrence;
  return { nodeId, parentNodeId, level, extendedQty, ...fields };
}
