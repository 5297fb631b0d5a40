import type { BomAlternate, BomNode, BomType, BomWarning, CurrencyAmount, MissingCost } from '@hwp/contracts';
import type { EntityManager } from 'typeorm';
import { compactRefdes } from './refdes';

/** How deep a tree is expanded: deeper product structures are refused as a cycle would be. */
export const MAX_DEPTH = 64;

/** One row of the expansion query: a line of some BOM at its place in the tree. */
interface TreeRow {
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
  level: number;
  path: string[];
  parts: string[];
  cycle: boolean;
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

/**
 * The whole tree under one BOM in one recursive query: its lines (and lines nested under them in the
 * document), then, for each child part that has a BOM of the same type (the approved one, else the
 * latest), that BOM's lines, and so on. `parts` carries the part ids from the top assembly down; a line
 * whose part is already on its path is marked `cycle` and not expanded, so the query always ends.
 */
const TREE_SQL = `
  WITH RECURSIVE chosen AS (
    SELECT DISTINCT ON (b.assembly_part_id) b.assembly_part_id, b.id
    FROM boms b
    WHERE b.workspace_id = $1 AND b.type = $2
    ORDER BY b.assembly_part_id, (b.status = 'approved') DESC, b.created_at DESC, b.id DESC
  ),
  tree AS (
    SELECT i.id, i.bom_id, i.child_part_id, 1 AS level, ARRAY[i.id] AS path,
           ARRAY[$4::uuid, i.child_part_id] AS parts, i.child_part_id = $4::uuid AS cycle
    FROM bom_items i
    WHERE i.bom_id = $3 AND i.parent_item_id IS NULL
    UNION ALL
    SELECT c.id, c.bom_id, c.child_part_id, t.level + 1, t.path || c.id,
           t.parts || c.child_part_id, c.child_part_id = ANY(t.parts)
    FROM tree t
    LEFT JOIN chosen ch ON ch.assembly_part_id = t.child_part_id
    JOIN bom_items c
      ON (c.bom_id = t.bom_id AND c.parent_item_id = t.id)
      OR (c.bom_id = ch.id AND c.bom_id <> t.bom_id AND c.parent_item_id IS NULL)
    WHERE NOT t.cycle AND t.level < ${MAX_DEPTH}
  )
  SELECT t.id, t.bom_id, b.revision AS bom_revision, i.parent_item_id, t.child_part_id, i.child_version_id,
         i.qty, i.uom, i.refdes, i.notes, i.sort_index, i.attributes,
         i.date_from::text AS date_from, i.date_to::text AS date_to, i.serial_from, i.serial_to,
         i.lot_from, i.lot_to, t.level, t.path, t.parts, t.cycle,
         CASE WHEN t.cycle THEN NULL ELSE ch.id END AS sub_bom_id,
         p.part_number, p.name, p.unit_cost, p.currency, p.rohs_compliant, p.reach_compliant,
         p.conflict_minerals,
         COALESCE((
           SELECT jsonb_agg(jsonb_build_object(
             'partId', a.part_id, 'partNumber', ap.part_number, 'approval', a.approval,
             'rationale', a.rationale, 'proposedBy', pu.username, 'approvedBy', au.username
           ) ORDER BY a.position)
           FROM bom_item_alternates a
           JOIN parts ap ON ap.id = a.part_id
           JOIN collab_users pu ON pu.id = a.proposed_by
           LEFT JOIN collab_users au ON au.id = a.approved_by
           WHERE a.item_id = t.id
         ), '[]'::jsonb) AS alternates
  FROM tree t
  JOIN bom_items i ON i.id = t.id
  JOIN boms b ON b.id = t.bom_id
  JOIN parts p ON p.id = t.child_part_id
  LEFT JOIN chosen ch ON ch.assembly_part_id = t.child_part_id AND ch.id <> t.bom_id`;

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

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** Runs the expansion query (read-only; on the caller's manager, so inside its transaction). */
export async function loadTreeRows(manager: EntityManager, root: TreeRoot): Promise<TreeRow[]> {
  return manager.query(TREE_SQL, [root.workspaceId, root.type, root.id, root.assemblyPartId]);
}

function amounts(map: Map<string | null, number>): CurrencyAmount[] {
  return [...map.entries()]
    .filter(([, amount]) => amount !== 0 || map.size === 1)
    .sort(([a], [b]) => (a ?? '').localeCompare(b ?? ''))
    .map(([currency, amount]) => ({ currency, amount: round(amount) }));
}

function addScaled(into: Map<string | null, number>, from: Map<string | null, number>, factor: number) {
  for (const [currency, amount] of from) into.set(currency, (into.get(currency) ?? 0) + amount * factor);
}

function warningsOf(row: TreeRow, leaf: boolean): BomWarning[] {
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
  if (leaf && row.unit_cost === null && !row.cycle)
    warnings.push({ code: 'missing_cost', message: `${row.part_number} has no unit cost` });
  const qty = Number(row.qty);
  if (row.uom === 'each' && row.refdes.length > 0 && row.refdes.length !== qty) {
    warnings.push({
      code: 'refdes_mismatch',
      message: `${row.refdes.length} reference designators for a quantity of ${qty}`,
    });
  }
  if (row.cycle)
    warnings.push({ code: 'cycle', message: `${row.part_number} contains itself; not expanded further` });
  return warnings;
}

/**
 * Builds the tree from the query's rows: children in sort order (then creation order), extended
 * quantities (the product down the path), and the cost rollup bottom-up: a node with lines under it
 * costs the sum of qty x their unit rollups, a leaf its part's unit cost. Currencies are kept apart.
 */
export function assembleTree(rows: TreeRow[], root: TreeRoot): ExpandedTree {
  const byParentPath = new Map<string, TreeRow[]>();
  const numbers = new Map<string, string>([[root.assemblyPartId, root.assemblyPartNumber]]);
  for (const row of rows) {
    numbers.set(row.child_part_id, row.part_number);
    const key = row.path.slice(0, -1).join('/');
    const siblings = byParentPath.get(key);
    if (siblings) siblings.push(row);
    else byParentPath.set(key, [row]);
  }
  for (const siblings of byParentPath.values())
    siblings.sort((a, b) => a.sort_index - b.sort_index || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  const nodes: ExpandedNode[] = [];
  const missingCosts: MissingCost[] = [];
  const cycles: string[][] = [];

  const build = (row: TreeRow, parent: ExpandedNode | null): ExpandedNode => {
    const nodeId = row.path.join('/');
    const qty = Number(row.qty);
    const partPath = row.parts.map((id) => numbers.get(id) ?? id);
    const node: ExpandedNode = {
      nodeId,
      parentNodeId: parent?.nodeId ?? null,
      itemId: row.id,
      id: row.id,
      bomId: row.bom_id,
      bomRevision: row.bom_revision,
      level: row.level,
      parentItemId: row.parent_item_id,
      childPartId: row.child_part_id,
      partNumber: row.part_number,
      name: row.name,
      childVersionId: row.child_version_id,
      qty,
      extendedQty: round((parent?.extendedQty ?? 1) * qty),
      uom: row.uom,
      refdes: compactRefdes(row.refdes),
      designators: row.refdes,
      notes: row.notes,
      sortIndex: row.sort_index,
      attributes: row.attributes,
      alternates: row.alternates,
      dateFrom: row.date_from,
      dateTo: row.date_to,
      serialFrom: row.serial_from === null ? null : Number(row.serial_from),
      serialTo: row.serial_to === null ? null : Number(row.serial_to),
      lotFrom: row.lot_from,
      lotTo: row.lot_to,
      subBomId: row.sub_bom_id,
      unitCost: row.unit_cost === null ? null : Number(row.unit_cost),
      currency: row.currency,
      extendedCost: [],
      warnings: [],
      partPath,
      unitRollup: new Map(),
      children: [],
      cycle: row.cycle,
    };
    nodes.push(node);
    if (row.cycle) cycles.push(partPath);
    for (const child of byParentPath.get(nodeId) ?? []) node.children.push(build(child, node));
    const leaf = node.children.length === 0;
    if (!leaf) {
      for (const child of node.children) addScaled(node.unitRollup, child.unitRollup, child.qty);
    } else if (node.unitCost !== null) {
      node.unitRollup.set(node.currency, node.unitCost);
    } else if (!row.cycle) {
      missingCosts.push({ nodeId, partId: node.childPartId, partNumber: node.partNumber, path: partPath });
    }
    const extended = new Map<string | null, number>();
    addScaled(extended, node.unitRollup, qty);
    node.extendedCost = amounts(extended);
    node.warnings = warningsOf(row, leaf);
    return node;
  };

  const top = (byParentPath.get('') ?? []).map((row) => build(row, null));
  const totals = new Map<string | null, number>();
  for (const node of top) addScaled(totals, node.unitRollup, node.qty);
  return { nodes, top, totals: amounts(totals), missingCosts, cycles };
}

/** The presented node (without the rollup's working fields). */
export function presentNode(node: ExpandedNode): BomNode {
  const { partPath: _path, unitRollup: _rollup, children: _children, cycle: _cycle, ...presented } = node;
  return presented;
}
