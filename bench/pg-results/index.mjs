// How long the results of pg queries stay on the heap: the platform's CallbackQueryClient with its type
// parsers (the pool's connections, packages/platform/src/db/pg-client.ts; from the built dist) against
// pg's own Client in its promise form, the baseline, each in a process of its own, in the same run. Each runs BENCH_PG_QUERIES (5,000)
// queries of 50 rows x 12 columns one after the other (real Postgres, BENCH_POSTGRES_URL), using each
// result and dropping it, with a 1 ms pause between queries as between requests. Figures: bytes promoted
// to the old generation per query (V8's --trace-gc-nvp `promoted`, summed over the young-generation
// collections), the young-generation pause per query and the full collections' pause per query (what
// the promoted results cost later); with their ratios to the baseline.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { root, round2 } from '../lib/collab.mjs';
import { postgresUrl as url } from '../lib/postgres.mjs';

const queries = Number(process.env.BENCH_PG_QUERIES ?? 5000);
const SQL = `SELECT g AS id, 'PRT-' || lpad(g::text, 7, '0') AS part_number, 'Hex bolt M4x16 rev ' || g AS name,
  now() AS created_at, now() AS updated_at, ARRAY['bench', 'batch-' || g] AS tags, '{"k": 1}'::jsonb AS attributes,
  'Acme' AS manufacturer_name, 'MPN' || g AS manufacturer_part_number, (g / 10.0)::numeric(18, 6) AS unit_cost,
  'EUR' AS currency, 'prototype' AS lifecycle FROM generate_series(1, 50) g`;

async function child(kind) {
  const platform = createRequire(join(root, 'packages/platform/package.json'));
  const { Client } = platform('pg');
  const { CallbackQueryClient, pgTypes } = platform(join(root, 'packages/platform/dist/db/pg-client.js'));
  const client =
    kind === 'callback'
      ? new CallbackQueryClient({ connectionString: url, types: pgTypes })
      : new Client({ connectionString: url });
  await client.connect();
  let rows = 0;
  for (let i = 0; i < queries; i++) {
    const result = await client.query(SQL);
    rows += result.rows.length;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await client.end();
  if (rows !== queries * 50) throw new Error(`read ${rows} rows`);
}

function measure(kind) {
  const run = spawnSync(
    process.execPath,
    ['--trace-gc', '--trace-gc-nvp', new URL(import.meta.url).pathname, kind],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  if (run.status !== 0) throw new Error(`${kind} run failed: ${run.stderr}`);
  let promoted = 0;
  let pauseMs = 0;
  let scavenges = 0;
  let fullPauseMs = 0;
  let fullCollections = 0;
  for (const line of run.stdout.split('\n')) {
    const pause = Number(/ pause=([\d.]+)/.exec(line)?.[1] ?? 0);
    if (line.includes(' gc=s ')) {
      scavenges++;
      promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
      pauseMs += pause;
    } else if (line.includes(' gc=mc ')) {
      fullCollections++;
      fullPauseMs += pause;
    }
  }
  return {
    promotedBytesPerQuery: Math.round(promoted / queries),
    scavengePauseUsPerQuery: round2((pauseMs * 1000) / queries),
    fullGcPauseUsPerQuery: round2((fullPauseMs * 1000) / queries),
    scavenges,
    fullCollections,
  };
}

const ratio = (a, b) => (b > 0 ? round2(a / b) : null);

if (process.argv[2]) {
  await child(process.argv[2]);
} else {
  const baseline = measure('promise');
  const platform = measure('callback');
  console.log(
    JSON.stringify({
      bench: 'pg-results',
      queries,
      ...platform,
      baselinePromotedBytesPerQuery: baseline.promotedBytesPerQuery,
      baselineScavengePauseUsPerQuery: baseline.scavengePauseUsPerQuery,
      baselineFullGcPauseUsPerQuery: baseline.fullGcPauseUsPerQuery,
      baselineScavenges: baseline.scavenges,
      baselineFullCollections: baseline.fullCollections,
      promotedRatio: ratio(platform.promotedBytesPerQuery, baseline.promotedBytesPerQuery),
      pauseRatio: ratio(platform.scavengePauseUsPerQuery, baseline.scavengePauseUsPerQuery),
      fullGcPauseRatio: ratio(platform.fullGcPauseUsPerQuery, baseline.fullGcPauseUsPerQuery),
      baseline: "pg's Client, promise form (client.query(text))",
    }),
  );
}
