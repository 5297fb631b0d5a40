// Events per second end to end on RabbitMQ: written to the outbox in transactions of 100, published by
// the relay with confirms, consumed through the inbox by a handler, on quorum work queues against
// classic ones on the same single node, in the same run: BENCH_BUS_ROUNDS rounds (default 4), each
// measuring both types in alternating order on fresh queues; the medians and their ratio (target
// quorum/classic >= 0.7). Runs the built dist (`npx tsc -b tsconfig.build.json` first), Postgres on
// BENCH_POSTGRES_URL, the broker on BENCH_AMQP_URL. Events per measure: BENCH_BUS_EVENTS (5000).
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { root, round2 } from '../lib/collab.mjs';
import { throwawayDatabase } from '../lib/postgres.mjs';

const require = createRequire(import.meta.url);
const platform = require(join(root, 'packages/platform/dist/index.js'));
const amqp = createRequire(join(root, 'packages/platform/package.json'))('amqplib');
const { AmqpTransport, busEntities, busMigrations, createBus, createDataSource, openDatabase, silentLogger } =
  platform;

const amqpUrl = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const events = Number(process.env.BENCH_BUS_EVENTS ?? 5000);
const rounds = Number(process.env.BENCH_BUS_ROUNDS ?? 4);
const perTransaction = 100;
const run = randomBytes(3).toString('hex');
const key = `bench.bus${run}.happened.v1`;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const db = await throwawayDatabase('bench_bus');
const dataSource = createDataSource({
  url: db.url,
  entities: busEntities,
  migrations: busMigrations,
  poolSize: 10,
});
await openDatabase(dataSource);
const admin = await amqp.connect(amqpUrl);
const adminChannel = await admin.createChannel();

/** One measure: `events` events through outbox, broker and inbox on fresh queues of `queueType`. */
async function measure(queueType, round) {
  await dataSource.query('TRUNCATE outbox, inbox');
  const namespace = `bench-bus-${run}-${queueType}-${round}.`;
  const serviceName = 'bench-bus';
  const transport = new AmqpTransport({
    url: amqpUrl,
    serviceName,
    namespace,
    queueType,
    logger: silentLogger,
  });
  const bus = createBus({ serviceName, dataSource, transport, logger: silentLogger, relayIntervalMs: 50 });
  let handled = 0;
  let done;
  const allHandled = new Promise((resolve) => {
    done = resolve;
  });
  try {
    await bus.start();
    await bus.subscribe({ consumer: 'sink', patterns: [key] }, async () => {
      if (++handled === events) done();
    });
    const started = performance.now();
    for (let written = 0; written < events; written += perTransaction) {
      await bus.transaction(async (manager) => {
        for (let i = written; i < Math.min(events, written + perTransaction); i++)
          await bus.outbox.add(manager, { type: key, actor: 'bench', data: { i } });
      });
    }
    await allHandled;
    return events / ((performance.now() - started) / 1000);
  } finally {
    await bus.close();
    const queue = `${namespace}${serviceName}.sink`;
    for (const name of [queue, `${queue}.retry`, `${queue}.dlq`]) await adminChannel.deleteQueue(name);
    await adminChannel.deleteExchange(`${namespace}hwp.events`);
  }
}

try {
  // Warm-up of both paths (JIT, pool, broker), not counted.
  await measure('classic', 'warm');
  await measure('quorum', 'warm');
  const rates = { quorum: [], classic: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['quorum', 'classic'] : ['classic', 'quorum'];
    for (const queueType of order) rates[queueType].push(await measure(queueType, round));
  }
  const quorum = median(rates.quorum);
  const classic = median(rates.classic);
  console.log(
    JSON.stringify({
      bench: 'bus',
      events,
      rounds,
      quorumEventsPerSec: round2(quorum),
      classicEventsPerSec: round2(classic),
      ratio: round2(quorum / classic),
      target: 'quorum/classic >= 0.7',
      quorumSamples: rates.quorum.map(round2),
      classicSamples: rates.classic.map(round2),
      baseline: 'the same pipeline on classic work queues on the same node, rounds alternating, same run',
    }),
  );
} finally {
  await admin.close().catch(() => undefined);
  await dataSource.destroy();
  await db.drop();
}
