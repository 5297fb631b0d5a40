// Lock contention on the collaboration host: BENCH_LOCK_CLIENTS (200) users, members of one workspace,
// each sends POST /v1/locks/lock at once on one of BENCH_LOCK_PATHS (20) paths (10 per path). Figures:
// p50/p99 latency of the attempts (target p99 < 100 ms; medians over BENCH_LOCK_BURSTS bursts) and
// the winners per path (must be exactly 1 in every burst).
import { benchSetup, call, percentile, pg, round2, startCollab, timedRequest } from '../lib/collab.mjs';

const clients = Number(process.env.BENCH_LOCK_CLIENTS ?? 200);
const paths = Number(process.env.BENCH_LOCK_PATHS ?? 20);

const setup = await benchSetup('locks');
const collab = await startCollab(setup.env);
const owner = setup.user('owner');
await call(collab.base, 'POST', '/v1/users/init', owner.token, {});
const workspace = `bench-locks-${Date.now().toString(36)}`;
const created = await call(collab.base, 'POST', '/v1/workspaces', owner.token, { name: workspace });
const users = Array.from({ length: clients }, () => setup.user('engineer'));
for (let i = 0; i < users.length; i += 20)
  await Promise.all(
    users.slice(i, i + 20).map((u) => call(collab.base, 'POST', '/v1/users/init', u.token, {})),
  );
const db = new pg.Client({ connectionString: setup.db.url });
await db.connect();
await db.query(
  `INSERT INTO workspace_members (workspace_id, user_id, role, joined_at)
   SELECT $1, unnest($2::uuid[]), 'engineer', now()`,
  [created.id, users.map((u) => u.id)],
);
await db.end();

async function attempt(user, path) {
  const res = await timedRequest(collab.base, 'POST', '/v1/locks/lock', {
    token: user.token,
    body: { path },
  });
  return { status: res.status, ms: res.ms, path };
}

try {
  // Warm-up, so the figures are of a running server with its users signed in: each client reads the
  // lock state of its path first (as an editor does before it locks), which opens its keep-alive
  // connection.
  for (let i = 0; i < users.length; i += 50)
    await Promise.all(
      users.slice(i, i + 50).map(async (u, j) => {
        const path = `${workspace}/shared/p${(i + j) % paths}.step`;
        const res = await timedRequest(collab.base, 'GET', `/v1/locks?path=${encodeURIComponent(path)}`, {
          token: u.token,
        });
        if (res.status !== 200) throw new Error(`GET /v1/locks answered ${res.status}`);
      }),
    );
  // Then BENCH_LOCK_WARM_ROUNDS (20) rounds of the burst on other paths: the figures are of a server
  // that has answered a few thousand requests (JIT, pools), not of its first seconds.
  const warmRounds = Number(process.env.BENCH_LOCK_WARM_ROUNDS ?? 20);
  for (let round = 0; round < warmRounds; round++)
    await Promise.all(users.map((u, i) => attempt(u, `${workspace}/warm${round}/p${i % paths}.step`)));
  // BENCH_LOCK_BURSTS (5) measured bursts, each on fresh paths: one burst's p99 is its second
  // slowest answer, so the figure is the median of the bursts' p99 (the worst is printed too).
  const bursts = Number(process.env.BENCH_LOCK_BURSTS ?? 5);
  const figures = [];
  let oneWinnerEverywhere = true;
  let unexpected = 0;
  for (let burst = 0; burst < bursts; burst++) {
    const results = await Promise.all(
      users.map((u, i) => attempt(u, `${workspace}/shared${burst}/p${i % paths}.step`)),
    );
    const winners = new Map();
    for (const r of results) if (r.status === 200) winners.set(r.path, (winners.get(r.path) ?? 0) + 1);
    if (winners.size !== paths || [...winners.values()].some((n) => n !== 1)) oneWinnerEverywhere = false;
    unexpected += results.filter((r) => r.status !== 200 && r.status !== 409).length;
    const latencies = results.map((r) => r.ms).sort((a, b) => a - b);
    figures.push({
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1],
    });
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(
    JSON.stringify({
      bench: 'locks',
      clients,
      paths,
      bursts,
      p50Ms: round2(median(figures.map((f) => f.p50))),
      p99Ms: round2(median(figures.map((f) => f.p99))),
      worstBurstP99Ms: round2(Math.max(...figures.map((f) => f.p99))),
      p99sMs: figures.map((f) => round2(f.p99)),
      target: 'p99 < 100 ms',
      exactlyOneWinnerPerPathInEveryBurst: oneWinnerEverywhere,
      unexpectedStatuses: unexpected,
    }),
  );
} finally {
  await collab.stop();
  await setup.close();
}
