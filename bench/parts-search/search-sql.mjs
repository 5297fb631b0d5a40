// The statements of the service's parts search (partSearchSql, from the built dist), so the bench's SQL
// baseline and the bare server run exactly what the service runs.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { root } from '../lib/collab.mjs';

const collabRequire = createRequire(join(root, 'services/collab-service/package.json'));
const { partSearchSql, COUNT_BOUND } = collabRequire('./dist/modules/parts/parts-search-sql.js');

/**
 * Runs a search as the service does, on `db` (a pg client or pool): the count with the page, past the
 * bound the page of common matches and the plan's estimate. Resolves to `{ total, rows }`.
 */
export async function search(db, workspaceId, q, pageSize) {
  const sql = partSearchSql(workspaceId, { q, pageSize });
  const first = await db.query(sql.first, sql.params);
  const total = first.rows[0].search_total;
  if (total <= COUNT_BOUND) return { total, rows: first.rows, statements: [sql.first], params: sql.params };
  const common = await db.query(sql.common, sql.params);
  await db.query(sql.estimate, sql.params);
  return { total, rows: common.rows, statements: [sql.first, sql.common], params: sql.params };
}
