import type { BomAlternate, BomNode, BomType, BomWarning, CurrencyAmount, MissingCost } from '@hwp/contracts';
import type { EntityManager } from 'typeorm';
import { compactRefdes } from './refdes';

/** How deep a tree is expanded: deeper product structures are refused as a cycle would be. */
export const MAX_DEPTH = 64;

/** One line of a BOM the tree reaches, with its part and the BOM its part expands into. */
export interface LineRow {
  id: string;
  bom_id: string;
  bom_revision: string;
  parent_item_id: string | null;
  child_part_id: string;
  child_version_id: string | null;
  qty: string;
  uom: string;
  refdes: string[];
  notes: string;
  sort_index: number;
  attributes: Record<string, unknown>;
  date_from: string | null;
  date_to: string | null;
  serial_from: string | null;
  serial_to: string | null;
  lot_from: string | null;
  lot_to: string | null;
  /** The BOM of the same type the child part expands into: its approved one, else its latest. */
  sub_bom_id: string | null;
  part_number: string;
  name: string;
  unit_cost: string | null;
  currency: string | null;
  rohs_compliant: boolean | null;
  reach_compliant: boolean | null;
  conflict_minerals: string | null;
  alternates: BomAlternate[];
}

/** The BOM of the same type a part expands into (approved, else the latest), for `i.child_part_id`. */
const CHOSEN_BOM = `
  SELECT b.id FROM boms b
  WHERE b.workspace_id = $1 AND b.type = $2 AND b.assembly_part_id = i.child_part_id
  ORDER BY (b.status = 'approved') DESC, b.created_at DESC, b.id DESC
  LIMIT 1`;

/**
 * Every line of every BOM under one BOM, each once: the BOMs the tree reaches (the root, then for
 * each line's child part the BOM it expands into, and so on; UNION ends on cycles), then their lines
 * with parts and alternates. A sub-assembly used in many places is read once: the tree is expanded
 * from these lines in assembleTree, so the query's work follows the distinct lines, not the
 * expanded ones (4,973 lines for a tree of 20,399 in bench/bom). The BOM each part expands into is
 * looked up once, while reaching (`via_line` rows: the root itself need not be its part's chosen
 * BOM), and the lines take it from there.
 */
const LINES_SQL = `
  WITH RECURSIVE reach(bom_id, part_id, via_line) AS (
    SELECT $3::uuid, NULL::uuid, false
    UNION
    SELECT s.id, i.child_part_id, true
    FROM reach r JOIN bom_items i ON i.bom_id = r.bom_id CROSS JOIN LATERAL (${CHOSEN_BOM}) s
  ),
  lines AS MATERIALIZED (
    SELECT i.*, sub.bom_id AS sub_bom_id
    FROM bom_items i
    LEFT JOIN (SELECT DISTINCT part_id, bom_id FROM reach WHERE via_line) sub ON sub.part_id = i.child_part_id
    WHERE i.bom_id IN (SELECT bom_id FROM reach)
  ),
  alternates AS (
    SELECT a.item_id, jsonb_agg(jsonb_build_object(
             'partId', a.part_id, 'partNumber', ap.part_number, 'approval', a.approval,
             'rationale', a.rationale, 'proposedBy', pu.username, 'approvedBy', au.username
           ) ORDER BY a.position) AS list
    FROM bom_item_alternates a
    JOIN parts ap ON ap.id = a.part_id
    JOIN collab_users pu ON pu.id = a.proposed_by
    LEFT JOIN collab_users au ON au.id = a.approved_by
    WHERE a.item_id IN (SELECT id FROM lines)
    GROUP BY a.item_id
  )
  SELECT l.id, l.bom_id, b.revision AS bom_revision, l.parent_item_id, l.child_part_id, l.child_version_id,
         l.qty, l.uom, l.refdes, l.notes, l.sort_index, l.attributes,
         l.date_from::text AS date_from, l.date_to::text AS date_to, l.serial_from, l.serial_to,
         l.lot_from, l.lot_to, l.sub_bom_id,
         p.part_number, p.name, p.unit_cost, p.currency, p.rohs_compliant, p.reach_compliant,
         p.conflict_minerals, COALESCE(al.list, '[]'::jsonb) AS alternates
  FROM lines l
  JOIN boms b ON b.id = l.bom_id
  JOIN parts p ON p.id = l.child_part_id
  LEFT JOIN alternates al ON al.item_id = l.id`;

/** The root of an expansion: a BOM and its assembly. */
export interface TreeRoot {
  id: string;
  workspaceId: string;
  type: BomType;
  assemblyPartId: string;
  assemblyPartNumber: string;
}

/** A node with what the rollup needs besides the presented fields. */
export interface ExpandedNode extends BomNode {
  /** Part numbers from the top assembly down to this node's part. */
  partPath: string[];
  /** This node's unit rollup (its own BOM's cost, else the part's unit cost), per currency. */
  unitRollup: Map<string | null, number>;
  children: ExpandedNode[];
  cycle: boolean;
}

export interface ExpandedTree {
  /** Depth first, in sort order. */
  nodes: ExpandedNode[];
  top: ExpandedNode[];
  totals: CurrencyAmount[];
  missingCosts: MissingCost[];
  cycles: string[][];
}

export const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** Reads the lines the tree is made of (read-only; on the caller's manager, so inside its transaction). */
export async function loadTreeLines(manager: EntityManager, root: TreeRoot): Promise<LineRow[]> {
  return manager.query(LINES_SQL, [root.workspaceId, root.type, root.id]);
}

export function amounts(map: Map<string | null, number>): CurrencyAmount[] {
  return [...map.entries()]
    .filter(([, amount]) => amount !== 0 || map.size === 1)
    .sort(([a], [b]) => (a ?? '').localeCompare(b ?? ''))
    .map(([currency, amount]) => ({ currency, amount: round(amount) }));
}

export function addScaled(
  into: Map<string | null, number>,
  from: Map<string | null, number>,
  factor: number,
) {
  for (const [currency, amount] of from) into.set(currency, (into.get(currency) ?? 0) + amount * factor);
}

export function warningsOf(row: LineRow, leaf: boolean, cycle: boolean): BomWarning[] {
  const warnings: BomWarning[] = [];
  const problems: string[] = [];
  if (row.rohs_compliant === false) problems.push('not RoHS compliant');
  if (row.reach_compliant === false) problems.push('not REACH compliant');
  const minerals = row.conflict_minerals
    ?.trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
  if (minerals && minerals !== 'conflict-free' && minerals !== 'none')
    problems.push(`conflict minerals: ${row.conflict_minerals}`);
  if (problems.length > 0)
    warnings.push({ code: 'non_compliant', message: `${row.part_number} is ${problems.join(', ')}` });
  if (leaf && row.unit_cost === null && !cycle)
    warnings.push({ code: 'missing_cost', message: `${row.part_number} has no unit cost` });
  const qty = Number(row.qty);
  if (row.uom === 'each' && row.refdes.length > 0 && row.refdes.length !== qty) {
    warnings.push({
      code: 'refdes_mismatch',
      message: `${row.refdes.length} reference designators for a quantity of ${qty}`,
    });
  }
  if (cycle)
    warnings.push({ code: 'cycle', message: `${row.part_number} contains itself; not expanded further` });
  return warnings;
}

/** Siblings in sort order, then creation order (ids are time-ordered). */
export const bySortIndex = (a: LineRow, b: LineRow) =>
  a.sort_index - b.sort_index || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * What a node shows of its line, the row's own fields (the same in every occurrence, except that a
 * node marked as a cycle expands into no sub-BOM) and the costs and warnings given: everything but
 * the path and the quantities per top assembly. One object literal, in the order of BomNode's JSON:
 * spreading it into another was a third of the per-line work of a tree read.
 */
export function rowNodeFields(
  line: LineRow,
  refdes: string,
  cycle: boolean,
  extendedCost: CurrencyAmount[],
  warnings: BomWarning[],
): Omit<BomNode, 'nodeId' | 'parentNodeId' | 'level' | 'extendedQty'> {
  return {
    itemId: line.id,
    id: line.id,
    bomId: line.bom_id,
    bomRevision: line.bom_revision,
    parentItemId: line.parent_item_id,
    childPartId: line.child_part_id,
    partNumber: line.part_number,
    name: line.name,
    childVersionId: line.child_version_id,
    qty: Number(line.qty),
    uom: line.uom,
    refdes,
    designators: line.refdes,
    notes: line.notes,
    sortIndex: line.sort_index,
    attributes: line.attributes,
    alternates: line.alternates,
    dateFrom: line.date_from,
    dateTo: line.date_to,
    serialFrom: line.serial_from === null ? null : Number(line.serial_from),
    serialTo: line.serial_to === null ? null : Number(line.serial_to),
    lotFrom: line.lot_from,
    lotTo: line.lot_to,
    subBomId: !cycle && line.sub_bom_id !== line.bom_id ? line.sub_bom_id : null,
    unitCost: line.unit_cost === null ? null : Number(line.unit_cost),
    currency: line.currency,
    extendedCost,
    warnings,
  };
}

/**
 * Expands the tree from its lines: under each line, the lines nested under it in its BOM and the top
 * lines of the BOM its part expands into (unless that part is already on the path: a cycle, marked
 * and not expanded; or the depth reached MAX_DEPTH). Children in sort order (then creation order),
 * extended quantities (the product down the path), and the cost rollup bottom-up: a node with lines
 * under it costs the sum of qty x their unit rollups, a leaf its part's unit cost. Currencies are
 * kept apart. Each occurrence of a shared sub-assembly is its own node (its own path, quantities and
 * warnings); the lines behind it were read once.
 */
export function assembleTree(lines: LineRow[], root: TreeRoot): ExpandedTree {
  const topOf = new Map<string, LineRow[]>();
  const nestedUnder = new Map<string, LineRow[]>();
  const numbers = new Map<string, string>([[root.assemblyPartId, root.assemblyPartNumber]]);
  for (const line of lines) {
    numbers.set(line.child_part_id, line.part_number);
    const [index, key] = line.parent_item_id ? [nestedUnder, line.parent_item_id] : [topOf, line.bom_id];
    const siblings = index.get(key);
    if (siblings) siblings.push(line);
    else index.set(key, [line]);
  }
  for (const siblings of topOf.values()) siblings.sort(bySortIndex);
  for (const siblings of nestedUnder.values()) siblings.sort(bySortIndex);
  // What a line presents the same wherever it occurs: computed once per line.
  const refdesText = new Map<string, string>();
  const compact = (line: LineRow) => {
    let text = refdesText.get(line.id);
    if (text === undefined) {
      text = compactRefdes(line.refdes);
      refdesText.set(line.id, text);
    }
    return text;
  };

  const nodes: ExpandedNode[] = [];
  const missingCosts: MissingCost[] = [];
  const cycles: string[][] = [];

  const build = (
    line: LineRow,
    parent: ExpandedNode | null,
    ancestors: string[],
    level: number,
  ): ExpandedNode => {
    const nodeId = parent ? `${parent.nodeId}/${line.id}` : line.id;
    const qty = Number(line.qty);
    const cycle = ancestors.includes(line.child_part_id);
    const parts = [...ancestors, line.child_part_id];
    const partPath = parts.map((id) => numbers.get(id) ?? id);
    const subBomId = !cycle && line.sub_bom_id !== line.bom_id ? line.sub_bom_id : null;
    const node: ExpandedNode = {
      nodeId,
      parentNodeId: parent?.nodeId ?? null,
      level,
      extendedQty: round((parent?.extendedQty ?? 1) * qty),
      ...rowNodeFields(line, compact(line), cycle, [], []),
      partPath,
      unitRollup: new Map(),
      children: [],
      cycle,
    };
    nodes.push(node);
    if (cycle) cycles.push(partPath);
    if (!cycle && level < MAX_DEPTH) {
      const nested = nestedUnder.get(line.id) ?? [];
      const sub = subBomId ? (topOf.get(subBomId) ?? []) : [];
      const children =
        sub.length === 0 ? nested : nested.length === 0 ? sub : [...nested, ...sub].sort(bySortIndex);
      for (const child of children) node.children.push(build(child, node, parts, level + 1));
    }
    const leaf = node.children.length === 0;
    if (!leaf) {
      for (const child of node.children) addScaled(node.unitRollup, child.unitRollup, child.qty);
    } else if (node.unitCost !== null) {
      node.unitRollup.set(node.currency, node.unitCost);
    } else if (!cycle) {
      missingCosts.push({ nodeId, partId: node.childPartId, partNumber: node.partNumber, path: partPath });
    }
    const extended = new Map<string | null, number>();
    addScaled(extended, node.unitRollup, qty);
    node.extendedCost = amounts(extended);
    node.warnings = warningsOf(line, leaf, cycle);
    return node;
  };

  const top = (topOf.get(root.id) ?? []).map((line) => build(line, null, [root.assemblyPartId], 1));
  const totals = new Map<string | null, number>();
  for (const node of top) addScaled(totals, node.unitRollup, node.qty);
  return { nodes, top, totals: amounts(totals), missingCosts, cycles };
}

/** The presented node (without the rollup's working fields). */
export function presentNode(node: ExpandedNode): BomNode {
  const { partPath: _path, unitRollup: _rollup, children: _children, cycle: _cycle, ...presented } = node;
  return presented;
}
