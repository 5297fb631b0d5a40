// The SQL of PartsRepository.search for `q` with the default sort, and its parameters ($1 workspace id,
// $2 prefix pattern, $3 containment pattern): up to 1,001 matches read from the search indexes, their
// count, and the page with its creators in one statement; up to 1,000 matches the page is sorted from
// them, past it read from the sort index (one-time filters).
export const WHERE = `p.workspace_id = $1 AND (lower(p.part_number) LIKE $2 OR lower(p.name) LIKE $3
  OR lower(p.manufacturer_part_number) LIKE $2)`;
export const MATCHING_SQL = `SELECT 1 FROM parts p WHERE ${WHERE}`;

export const searchSql = (
  pageSize,
) => `WITH m AS MATERIALIZED (SELECT p.* FROM parts p WHERE ${WHERE} LIMIT 1001),
    c AS (SELECT count(*)::int AS n FROM m)
  SELECT c.n AS search_total, page.*, u.username AS created_by_username
  FROM c LEFT JOIN LATERAL (
    (SELECT m.* FROM m WHERE c.n <= 1000 ORDER BY m.part_number ASC, m.id ASC LIMIT ${pageSize} OFFSET 0)
    UNION ALL
    (SELECT p.* FROM parts p WHERE ${WHERE} AND c.n > 1000
      ORDER BY p.part_number ASC, p.id ASC LIMIT ${pageSize} OFFSET 0)) page ON true
  LEFT JOIN collab_users u ON u.id = page.created_by
  ORDER BY page.part_number ASC, page.id ASC`;

const likeEscape = (text) => text.replace(/[\\%_]/g, '\\$&');
export const paramsFor = (workspaceId, q) => {
  const term = likeEscape(q.toLowerCase());
  return [workspaceId, `${term}%`, `%${term}%`];
};
