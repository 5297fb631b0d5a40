// The SQL of PartsRepository.search for `q` with the default sort, and its parameters ($1 workspace id,
// $2 prefix pattern, $3 containment pattern). First statement: up to 1,001 matches read (a CTE planned
// whole, so from the search indexes), their count and, up to 1,000 matches, the page sorted from them
// with its creators.
// Past 1,000 matches, a second statement for the page (the sort index walked for at most 20,000 rows,
// else every match sorted) and the planner's estimate of the total (EXPLAIN).
export const WHERE = `p.workspace_id = $1 AND (lower(p.part_number) LIKE $2 OR lower(p.name) LIKE $3
  OR lower(p.manufacturer_part_number) LIKE $2)`;
export const MATCHING_SQL = `SELECT 1 FROM parts p WHERE ${WHERE}`;
const ORDER = (from) => `ORDER BY ${from}.part_number ASC, ${from}.id ASC`;

export const searchSql = (pageSize) => `WITH m AS MATERIALIZED (SELECT p.* FROM parts p WHERE ${WHERE}),
    c AS (SELECT count(*)::int AS n FROM (SELECT 1 FROM m LIMIT 1001) s)
  SELECT c.n AS search_total, page.*, u.username AS created_by_username
  FROM c LEFT JOIN LATERAL (SELECT m.* FROM m WHERE c.n <= 1000 ${ORDER('m')} LIMIT ${pageSize} OFFSET 0) page ON true
  LEFT JOIN collab_users u ON u.id = page.created_by
  ${ORDER('page')}`;

export const commonPageSql = (pageSize) => `WITH walk AS MATERIALIZED (
    SELECT p.* FROM (SELECT p.* FROM parts p WHERE p.workspace_id = $1 ${ORDER('p')} LIMIT 20000) p
     WHERE ${WHERE} ${ORDER('p')} LIMIT ${pageSize}),
    walked AS (SELECT count(*) >= ${pageSize} AS holds FROM walk)
  SELECT page.*, u.username AS created_by_username
  FROM walked, LATERAL (
    (SELECT walk.* FROM walk WHERE walked.holds ${ORDER('walk')} LIMIT ${pageSize} OFFSET 0)
    UNION ALL
    (SELECT m.* FROM (SELECT p.* FROM parts p WHERE ${WHERE} OFFSET 0) m
      WHERE NOT walked.holds ${ORDER('m')} LIMIT ${pageSize} OFFSET 0)) page
  LEFT JOIN collab_users u ON u.id = page.created_by
  ${ORDER('page')}`;

const likeEscape = (text) => text.replace(/[\\%_]/g, '\\$&');
export const paramsFor = (workspaceId, q) => {
  const term = likeEscape(q.toLowerCase());
  return [workspaceId, `${term}%`, `%${term}%`];
};
