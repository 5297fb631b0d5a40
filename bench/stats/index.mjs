// `GET /v1/workspace/stats` on a workspace with 100,000 tasks and 10,000 reviews (3 review tasks
// each): p50/p95 of sequential requests (target p95 < 50 ms), against the same grouped queries sent
// straight to Postgres from this process, in the same run. Rows: BENCH_STATS_TASKS (100000),
// BENCH_STATS_REVIEWS (10000); requests: BENCH_STATS_REQUESTS (300).
import { benchSetup, call, percentile, pg, round2, startCollab } from '../lib/collab.mjs';

const taskCount = Number(process.env.BENCH_STATS_TASKS ?? 100_000);
const reviewCount = Number(process.env.BENCH_STATS_REVIEWS ?? 10_000);
const requests = Number(process.env.BENCH_STATS_REQUESTS ?? 300);

const setup = await benchSetup('stats');
const collab = await startCollab(setup.env);
const client = new pg.Client({ connectionString: setup.db.url });
const extra = [];
try {
  const owner = setup.user('owner');
  await call(collab.base, 'POST', '/v1/users/init', owner.token, {});
  const workspace = `bench-stats-${Date.now().toString(36)}`;
  await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });
  // A second workspace of the same size, so the counts must pick their workspace's rows.
  const other = `bench-stats-other-${Date.now().toString(36)}`;
  await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: other });
  await client.connect();
  const [{ user_id }] = (await client.query('SELECT id AS user_id FROM collab_users LIMIT 1')).rows;
  for (const name of [workspace, other]) {
    const [{ id }] = (await client.query('SELECT id FROM workspaces WHERE name = $1', [name])).rows;
    await client.query(
      `INSERT INTO tasks (id, workspace_id, path, title, status, due_at, sort_index, created_by, deleted_at)
       SELECT gen_random_uuid(), $1, $2 || '/u/f' || (i % 500) || '.step', 'task ' || i,
              (ARRAY['open', 'in_progress', 'done', 'canceled'])[1 + i % 4],
              CASE WHEN i % 3 = 0 THEN now() + (i % 20 - 10) * interval '1 day' END, i, $3,
              CASE WHEN i % 50 = 0 THEN now() END
         FROM generate_series(1, $4) i`,
      [id, name, user_id, taskCount],
    );
    await client.query(
      `INSERT INTO design_reviews (id, workspace_id, path, reviewer_email, status, due_at, created_by)
       SELECT gen_random_uuid(), $1, $2 || '/u/r' || i || '.step', 'reviewer@bench.test',
              (ARRAY['open', 'in_review', 'completed', 'canceled'])[1 + i % 4],
              CASE WHEN i % 2 = 0 THEN now() + (i % 10 - 5) * interval '1 day' END, $3
         FROM generate_series(1, $4) i`,
      [id, name, user_id, reviewCount],
    );
    await client.query(
      `INSERT INTO review_tasks (id, review_id, title, status, sort_index, created_by)
       SELECT gen_random_uuid(), r.id, 'check ' || k, (ARRAY['open', 'in_progress', 'done'])[k], k, $2
         FROM design_reviews r, generate_series(1, 3) k WHERE r.workspace_id = $1`,
      [id, user_id],
    );
  }
  // As autovacuum leaves a table after a bulk insert: visibility map set, statistics fresh.
  await client.query('VACUUM ANALYZE tasks, design_reviews, review_tasks');
  const [{ id: workspaceId }] = (await client.query('SELECT id FROM workspaces WHERE name = $1', [workspace]))
    .rows;

  const timed = async (fn) => {
    const times = [];
    for (let i = 0; i < 20; i++) await fn();
    for (let i = 0; i < requests; i++) {
      const started = process.hrtime.bigint();
      await fn();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    return times.sort((a, b) => a - b);
  };
  let stats;
  const service = await timed(async () => {
    stats = await call(collab.base, 'GET', `/v1/workspace/stats?workspace=${workspace}`, owner.token);
  });
  const grouped = (from) =>
    `SELECT status, count(*)::int AS count,
            count(*) FILTER (WHERE due_at < now() AND status NOT IN ('completed', 'done', 'canceled'))::int AS overdue
       FROM ${from} GROUP BY status`;
  const clients = [
    client,
    new pg.Client({ connectionString: setup.db.url }),
    new pg.Client({ connectionString: setup.db.url }),
  ];
  extra.push(...clients.slice(1));
  await Promise.all(extra.map((c) => c.connect()));
  const bare = await timed(() =>
    Promise.all([
      clients[0].query(grouped('design_reviews WHERE workspace_id = $1'), [workspaceId]),
      clients[1].query(grouped('tasks WHERE workspace_id = $1 AND deleted_at IS NULL'), [workspaceId]),
      clients[2].query(
        grouped(
          'review_tasks rt WHERE rt.review_id IN (SELECT r.id FROM design_reviews r WHERE r.workspace_id = $1)',
        ),
        [workspaceId],
      ),
    ]),
  );
  if (stats.tasks.total !== taskCount - Math.floor(taskCount / 50) || stats.reviews.total !== reviewCount)
    throw new Error(`unexpected counts: ${JSON.stringify(stats)}`);
  console.log(
    JSON.stringify({
      bench: 'stats',
      tasks: taskCount,
      reviews: reviewCount,
      p50Ms: round2(percentile(service, 50)),
      p95Ms: round2(percentile(service, 95)),
      bareP50Ms: round2(percentile(bare, 50)),
      bareP95Ms: round2(percentile(bare, 95)),
      p95Ratio: round2(percentile(service, 95) / percentile(bare, 95)),
      requests,
      baseline:
        'the same three grouped queries straight to Postgres on three connections at once, in this process',
    }),
  );
} finally {
  await client.end().catch(() => {});
  for (const c of extra) await c.end().catch(() => {});
  await collab.stop();
  await setup.close();
}
