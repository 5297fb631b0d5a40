// The floor of a BOM tree read in SQL: the whole multi-level expansion (every occurrence of every line,
// with its path, quantities' inputs, part fields and alternates) as one recursive query, written for
// speed (the nested-line and sub-BOM steps as two index lookups, alternates aggregated once, no JIT).
// bench/bom runs it on a `pg` pool beside the service's tree read and exports.

/** $1 workspace id, $2 BOM type, $3 BOM id, $4 its assembly part id. */
export const EXPANSION_SQL = `
  WITH RECURSIVE chosen AS MATERIALIZED (
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
    LEFT JOIN chosen ch ON ch.assembly_part_id = t.child_part_id AND ch.id <> t.bom_id
    CROSS JOIN LATERAL (
      SELECT n.id, n.bom_id, n.child_part_id FROM bom_items n WHERE n.parent_item_id = t.id
      UNION ALL
      SELECT s.id, s.bom_id, s.child_part_id FROM bom_items s WHERE s.bom_id = ch.id AND s.parent_item_id IS NULL
    ) c
    WHERE NOT t.cycle AND t.level < 64
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
    WHERE a.item_id IN (SELECT id FROM tree)
    GROUP BY a.item_id
  )
  SELECT t.id, t.bom_id, b.revision AS bom_revision, i.parent_item_id, t.child_part_id, i.child_version_id,
         i.qty, i.uom, i.refdes, i.notes, i.sort_index, i.attributes,
         i.date_from::text AS date_from, i.date_to::text AS date_to, i.serial_from, i.serial_to,
         i.lot_from, i.lot_to, t.level, t.path, t.parts, t.cycle,
         CASE WHEN t.cycle THEN NULL ELSE ch.id END AS sub_bom_id,
         p.part_number, p.name, p.unit_cost, p.currency, p.rohs_compliant, p.reach_compliant,
         p.conflict_minerals, COALESCE(al.list, '[]'::jsonb) AS alternates
  FROM tree t
  JOIN bom_items i ON i.id = t.id
  JOIN boms b ON b.id = t.bom_id
  JOIN parts p ON p.id = t.child_part_id
  LEFT JOIN chosen ch ON ch.assembly_part_id = t.child_part_id AND ch.id <> t.bom_id
  LEFT JOIN alternates al ON al.item_id = t.id`;

/** Runs the expansion on `pool` (JIT off for the session, as a tuned deployment would): the rows. */
export async function bareExpansion(pool, root) {
  const client = await pool.connect();
  try {
    await client.query('SET jit = off');
    const { rows } = await client.query({
      name: 'bom-expansion',
      text: EXPANSION_SQL,
      values: [root.workspaceId, root.type, root.id, root.assemblyPartId],
    });
    return rows;
  } finally {
    client.release();
  }
}
