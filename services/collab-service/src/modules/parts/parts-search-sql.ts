import { DEFAULT_PAGE_SIZE, type ListPartsQuery, type PartSortKey } from '@hwp/contracts';

const SORT_COLUMNS: Record<PartSortKey, string> = {
  part_number: 'part_number',
  name: 'name',
  domain: 'domain',
  lifecycle: 'lifecycle',
  manufacturer_part_number: 'manufacturer_part_number',
  updated_at: 'updated_at',
};

/** Matches counted exactly before the total becomes an estimate (`count=exact` counts all). */
export const COUNT_BOUND = 1000;
/**
 * Rows of the sort index a page of common matches is looked for in before every match is sorted
 * instead (~20 ms at most on 2 cores).
 */
const WALK_ROWS = 20_000;

/**
 * The parts in the trigram index of names for one part in eight (migration PartsNameSampleIndex):
 * reading COUNT_BOUND + 1 matches from the whole index reads every match (a GIN scan fills a bitmap
 * before the first row), ~30-80 ms for a word in 10% of a million parts.
 */
const SAMPLE = `right(p.id::text, 1) IN ('0', '8')`;

const likeEscape = (text: string) => text.replace(/[\\%_]/g, '\\$&');

/** The statements of a parts search (PartsRepository.search), with their parameters. */
export interface PartSearchSql {
  params: unknown[];
  /** Whether the search has a filter beyond the workspace. */
  filtered: boolean;
  offset: number;
  pageSize: number;
  /** The count (`search_total`) and the page (rows with `created_by_username`), but with a filter only up to COUNT_BOUND matches. */
  first: string;
  /** With a filter past COUNT_BOUND matches: the page. */
  common: string;
  /** The plan of the matches, whose row estimate is the total past COUNT_BOUND. */
  estimate: string;
}

/**
 * The SQL of a search of the parts of workspace `workspaceId` (section 4.6); id breaks ties so pages
 * neither repeat nor skip parts. How the page is read (the planner, left to itself, walked the sort
 * index for a small page, expecting matches spread evenly in sort order: a prefix whose parts sort
 * last, e.g. `PRT-0199` among 200,000, filtered the whole workspace, ~150 ms):
 * - without a filter, the first rows of the sort index, with the count, in one statement;
 * - with one, up to COUNT_BOUND + 1 matches are read (from the search indexes, unless matches are so
 *   common that the table is read), with the count; up to COUNT_BOUND, that is all of them, and the
 *   page is sorted from them in the same statement. With `q`, the name matches of the sample index
 *   are read first: more than COUNT_BOUND of them are enough (a word in 10% of a million names: 12,500
 *   entries of the sample read instead of 100,000);
 * - past the bound (common matches, `common`): the sort index is walked for at most WALK_ROWS rows,
 *   which holds the page when matches are common early in sort order; when it does not, every
 *   match is read from the search indexes and sorted.
 */
export function partSearchSql(workspaceId: string, query: ListPartsQuery): PartSearchSql {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  const dir = query.dir === 'desc' ? 'DESC' : 'ASC';
  const params: unknown[] = [workspaceId];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['p.workspace_id = $1'];
  // The filters besides `q`, which the sample of name matches (count) must pass too.
  const others: string[] = [];
  const q = query.q?.trim().toLowerCase();
  let nameMatches: string | undefined;
  if (q) {
    const prefix = param(`${likeEscape(q)}%`);
    const contains = param(`%${likeEscape(q)}%`);
    nameMatches = `lower(p.name) LIKE ${contains}`;
    where.push(
      `(lower(p.part_number) LIKE ${prefix} OR ${nameMatches} OR lower(p.manufacturer_part_number) LIKE ${prefix})`,
    );
  }
  if (query.domain) others.push(`p.domain = ${param(query.domain)}`);
  if (query.lifecycle) others.push(`p.lifecycle = ${param(query.lifecycle)}`);
  if (query.tag) others.push(`p.tags @> ARRAY[${param(query.tag)}]::text[]`);
  where.push(...others);
  const filter = where.join(' AND ');
  const sort = SORT_COLUMNS[query.sort ?? 'part_number'];
  const offset = (page - 1) * pageSize;
  const order = (from: string) => `ORDER BY ${from}.${sort} ${dir}, ${from}.id ${dir}`;
  const slice = `LIMIT ${pageSize} OFFSET ${offset}`;
  const filtered = where.length > 1;
  const bounded = (from: string) =>
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${from} LIMIT ${COUNT_BOUND + 1}) s`;
  let count = bounded(filtered ? 'm' : `parts p WHERE ${filter}`);
  if (query.count === 'exact') count = `SELECT count(*)::int AS n FROM parts p WHERE ${filter}`;
  else if (nameMatches && (q?.length ?? 0) >= 3) {
    // Name matches among the parts of the sample index are matches: past the bound, a common word is
    // proven from an eighth of its matches; else every match is counted up to the bound. (Below three
    // characters no trigram index helps: the sample would be read in table order, one row in eight.)
    const sample = [where[0], ...others, nameMatches, SAMPLE].join(' AND ');
    count = `SELECT CASE WHEN sampled.n > ${COUNT_BOUND} THEN sampled.n ELSE (${bounded('m')}) END AS n
       FROM (${bounded(`parts p WHERE ${sample}`)}) sampled`;
  }
  // The count and the page in one round trip; a page past the end is one row with the count and
  // no part. `m` is planned to read every match (a CTE is planned whole), so from the search
  // indexes; it is read only as far as the count's LIMIT asks. (Planned for its first 1,001 rows,
  // a scan in table order was chosen for a common prefix, which read the table until it met them.)
  // `c` is materialised: inlined, its count was planned and run a second time for the page's condition.
  const first = `WITH ${filtered ? `m AS MATERIALIZED (SELECT p.* FROM parts p WHERE ${filter}), ` : ''}c AS MATERIALIZED (${count})
     SELECT c.n AS search_total, page.*, u.username AS created_by_username
     FROM c LEFT JOIN LATERAL (${
       filtered
         ? `SELECT m.* FROM m WHERE c.n <= ${COUNT_BOUND} ${order('m')} ${slice}`
         : `SELECT p.* FROM parts p WHERE ${filter} ${order('p')} ${slice}`
     }) page ON true
     LEFT JOIN collab_users u ON u.id = page.created_by
     ${order('page')}`;
  // The walk stops at the page's last row: early when matches are common early in sort order.
  const reach = offset + pageSize;
  const common = `WITH walk AS MATERIALIZED (
       SELECT p.* FROM (SELECT p.* FROM parts p WHERE p.workspace_id = $1 ${order('p')} LIMIT ${WALK_ROWS}) p
        WHERE ${filter} ${order('p')} LIMIT ${reach}),
     walked AS (SELECT count(*) >= ${reach} AS holds FROM walk)
     SELECT page.*, u.username AS created_by_username
     FROM walked, LATERAL (
       (SELECT walk.* FROM walk WHERE walked.holds ${order('walk')} ${slice})
       UNION ALL
       (SELECT m.* FROM (SELECT p.* FROM parts p WHERE ${filter} OFFSET 0) m
         WHERE NOT walked.holds ${order('m')} ${slice})) page
     LEFT JOIN collab_users u ON u.id = page.created_by
     ${order('page')}`;
  const estimate = `EXPLAIN (FORMAT JSON) SELECT 1 FROM parts p WHERE ${filter}`;
  return { params, filtered, offset, pageSize, first, common, estimate };
}
