import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canStartRabbitCluster, type RabbitCluster, startRabbitCluster } from '@hwp/platform/test-kit';
import { connect } from 'amqplib';
import { Client } from 'pg';
import { startTwoServices, type TwoServices, unpublishedOutboxRows } from '#test/two-services';

/** Probe writes per second offered to the four processes together (each write is one event). */
const RATE = 40;
/** Load before the stop, the time the node stays down, and load after it is back. */
const BEFORE_MS = 6_000;
const DOWN_MS = 3_000;
const AFTER_MS = 8_000;
/** Events the run must carry in all (each successful write is one). */
const MIN_EVENTS = 1_050;

type Host = 'api' | 'collab';

interface Outcome {
  host: Host;
  replica: number;
  startedAt: number;
  endedAt: number;
  status: number | 'network';
  code?: string;
  probeId?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const other = (host: Host): Host => (host === 'api' ? 'collab' : 'api');
const prefix = (host: Host) => (host === 'api' ? '/system' : '/v1/system');

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Both services, two processes each, on a three-node RabbitMQ cluster of the test's own (the
 * machine's broker on 5672 is not used), AMQP_URL listing the three nodes. Under a steady load of
 * probe writes (each an outbox event to the other service) the node holding the work queues' leaders
 * is stopped and started again; every event must be handled once, nothing left in a queue.
 */
const describeCluster = canStartRabbitCluster() ? describe : describe.skip;

describeCluster('a RabbitMQ cluster node stopped under load (both services, two replicas each)', () => {
  let cluster: RabbitCluster;
  let services: TwoServices;
  let blobDir: string;
  const startedAt = Date.now();

  // Under two minutes in all on a quiet machine (cluster ~25 s, services ~15 s, load ~30 s); a
  // shared, loaded one needs longer to start the four processes.
  beforeAll(async () => {
    cluster = await startRabbitCluster();
    blobDir = mkdtempSync(join(tmpdir(), 'hwp-mq-cluster-blobs-'));
    services = await startTwoServices({
      name: 'mqcluster',
      replicas: 2,
      env: { AMQP_URL: cluster.amqpUrl, AMQP_QUEUE_TYPE: 'quorum', BUS_RETRY_DELAY_MS: '500' },
      apiEnv: { BLOB_DIR: join(blobDir, 'api') },
      collabEnv: { BLOB_DIR: join(blobDir, 'collab') },
    });
  }, 150_000);

  afterAll(async () => {
    await services?.stop().catch(() => undefined);
    await cluster?.destroy();
    if (blobDir) rmSync(blobDir, { recursive: true, force: true });
  });

  it('handles every event once while the node of the queue leaders stops and returns', async () => {
    const namespace = `mqcluster-${services.suffix}.`;
    const replicas = { api: services.replicas.api, collab: services.replicas.collab };
    const outcomes: Outcome[] = [];
    const pending: Promise<void>[] = [];

    async function write(host: Host, replica: number, n: number): Promise<void> {
      const o: Outcome = { host, replica, startedAt: Date.now(), endedAt: 0, status: 'network' };
      try {
        const res = await fetch(`${replicas[host][replica].url}${prefix(host)}/probes`, {
          method: 'POST',
          headers: { authorization: `Bearer ${services.opsToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ note: `load ${n}` }),
          signal: AbortSignal.timeout(20_000),
        });
        const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        o.status = res.status;
        if (res.status < 300) o.probeId = String(json.id);
        else o.code = String(json.code);
      } catch {
        o.status = 'network';
      }
      o.endedAt = Date.now();
      outcomes.push(o);
    }

    // Open loop: a write every 1000/RATE ms whatever the answers take, round the four processes.
    let running = true;
    const loadStart = Date.now();
    const offered = (async () => {
      for (let n = 0; running; n++) {
        const host: Host = n % 2 === 0 ? 'api' : 'collab';
        pending.push(write(host, Math.floor(n / 2) % 2, n));
        const next = loadStart + ((n + 1) * 1000) / RATE;
        await sleep(Math.max(0, next - Date.now()));
      }
    })();

    let leaderIndex = -1;
    let leadersBefore: string[] = [];
    let stoppedAt = 0;
    let stoppedIn = 0;
    let upAt = 0;
    try {
      await sleep(BEFORE_MS);
      // The work queues of the probe consumers, declared by the first process of each service.
      const leaders = (await cluster.queueLeaders(namespace)).filter((q) => q.name.endsWith('.bus-probe'));
      expect(leaders.map((q) => q.type)).toEqual(['quorum', 'quorum']);
      leadersBefore = leaders.map((q) => q.leader);
      const counts = cluster.nodes.map((node) => leadersBefore.filter((l) => l === node.name).length);
      leaderIndex = counts.indexOf(Math.max(...counts));
      stoppedAt = Date.now();
      // SIGKILL to the node's VM: no goodbye to its clients or peers, the harder case (and a graceful
      // `rabbitmqctl stop` of a loaded node took ~19 s here, too long for this test's budget).
      await cluster.stopNode(leaderIndex, { kill: true });
      stoppedIn = Date.now() - stoppedAt;
      await sleep(DOWN_MS);
      await cluster.startNode(leaderIndex);
      upAt = Date.now();
      await sleep(AFTER_MS);
      // The acceptance asks for at least 1,000 events; a slow stop or many 503s while connections
      // move can leave fewer in the fixed windows, so the load goes on (bounded) until there are.
      const succeeded = () => outcomes.filter((o) => typeof o.status === 'number' && o.status < 300).length;
      for (const until = Date.now() + 30_000; succeeded() < MIN_EVENTS && Date.now() < until; )
        await sleep(250);
    } finally {
      running = false;
      await offered;
      await Promise.all(pending);
    }
    const loadEnd = Date.now();
    const leadersAfter = (await cluster.queueLeaders(namespace))
      .filter((q) => q.name.endsWith('.bus-probe'))
      .map((q) => q.leader);

    // Every answer is a success, or a 503 (`unavailable`) while a connection moves: no other 5xx,
    // no request left without an answer.
    const ok = outcomes.filter((o) => typeof o.status === 'number' && o.status < 300);
    const bad = outcomes.filter(
      (o) =>
        !(typeof o.status === 'number' && o.status < 300) && !(o.status === 503 && o.code === 'unavailable'),
    );
    expect(bad.slice(0, 5)).toEqual([]);

    const db = async (host: Host) => {
      const client = new Client({ connectionString: services.dbUrl(services.databases[host]) });
      await client.connect();
      return client;
    };
    const clients = { api: await db('api'), collab: await db('collab') };
    const deliveries: { sentAt: number; receivedAt: number }[] = [];
    let events = 0;
    try {
      for (const host of ['api', 'collab'] as const) {
        const receiver = other(host);
        const written = ok.filter((o) => o.host === host).map((o) => o.probeId as string);
        const { rows: sent } = await clients[host].query<{ id: string }>(
          "SELECT id FROM bus_probes WHERE direction = 'sent'",
        );
        const stored = new Set(sent.map((r) => r.id));
        expect(written.filter((id) => !stored.has(id))).toEqual([]);
        const { rows: outbox } = await clients[host].query<{ id: string; probe: string }>(
          "SELECT id, envelope->'data'->>'probeId' AS probe FROM outbox WHERE type = 'system.probe.v1'",
        );
        expect(new Set(outbox.map((e) => e.probe))).toEqual(stored);
        events += outbox.length;

        // Each event handled once by the other service: one inbox row (its primary key makes a second
        // impossible) committed with the handler's effect, one received probe.
        const consumer = `${receiver}-service.bus-probe`;
        const handled = async () =>
          (
            await clients[receiver].query<{ event_id: string; n: number }>(
              'SELECT event_id, count(*)::int AS n FROM inbox WHERE consumer = $1 AND event_id = ANY($2) GROUP BY event_id',
              [consumer, outbox.map((e) => e.id)],
            )
          ).rows;
        for (
          const until = Date.now() + 20_000;
          (await handled()).length < outbox.length && Date.now() < until;
        )
          await sleep(200);
        const inbox = await handled();
        expect({ consumer, handled: inbox.length }).toEqual({ consumer, handled: outbox.length });
        expect(inbox.every((r) => r.n === 1)).toBe(true);
        const { rows: received } = await clients[receiver].query<{ id: string; sent: Date; received: Date }>(
          "SELECT id, sent_at AS sent, received_at AS received FROM bus_probes WHERE direction = 'received' AND origin = $1",
          [`${host}-service`],
        );
        expect(new Set(received.map((r) => r.id))).toEqual(stored);
        for (const r of received)
          deliveries.push({ sentAt: r.sent.getTime(), receivedAt: r.received.getTime() });

        // Every probe event marked published (waited for: the mark trails the broker's confirm).
        expect(await unpublishedOutboxRows(clients[host], 'system.probe.v1')).toBe(0);
      }
    } finally {
      await clients.api.end();
      await clients.collab.end();
    }
    expect(events).toBeGreaterThanOrEqual(1_000);

    // Nothing left behind in the probe queues, their retry queues or their dead-letter queues.
    const conn = await connect(cluster.nodes[(leaderIndex + 1) % cluster.nodes.length].url);
    const depths: Record<string, number> = {};
    try {
      const ch = await conn.createChannel();
      for (const service of ['api-service', 'collab-service'])
        for (const suffix of ['', '.retry', '.dlq']) {
          const queue = `${namespace}${service}.bus-probe${suffix}`;
          depths[queue] = (await ch.checkQueue(queue)).messageCount;
        }
    } finally {
      await conn.close();
    }
    expect(Object.values(depths).every((n) => n === 0)).toEqual(true);
    const logged = (pattern: RegExp) =>
      [...services.replicas.api, ...services.replicas.collab].flatMap((r) =>
        r.process
          .output()
          .split('\n')
          .filter((line) => pattern.test(line)),
      );
    expect(logged(/dead-lettered/).map((line) => line.slice(0, 500))).toEqual([]);
    expect(logged(/"unhandled error"/).map((line) => line.slice(0, 500))).toEqual([]);

    // Redeliveries the inbox absorbed. Both services consume every probe (the sender skips its own),
    // so each event is two deliveries; whatever the consumers counted beyond that was a redelivery.
    let consumed = 0;
    for (const r of [...services.replicas.api, ...services.replicas.collab]) {
      const res = await fetch(`${r.url}/metrics`, {
        headers: { authorization: `Bearer ${services.opsToken}` },
      });
      for (const [, n] of (await res.text()).matchAll(
        /^hwp_bus_deliveries_total\{[^}]*queue="[^"]*\.bus-probe"[^}]*outcome="consumed"[^}]*\} (\d+)/gm,
      ))
        consumed += Number(n);
    }

    // Figures: delivery rates before, during and after the outage, and how long until events flowed
    // as before again: until the last event sent from the stop on that took longer than twice the
    // 99th percentile before the stop (at least 2 s; the machine is shared, latency is noisy).
    const rate = (from: number, to: number) =>
      Math.round(
        (deliveries.filter((d) => d.receivedAt >= from && d.receivedAt < to).length * 1000) / (to - from),
      );
    const latency = (from: number, to: number) =>
      deliveries.filter((d) => d.sentAt >= from && d.sentAt < to).map((d) => d.receivedAt - d.sentAt);
    const prompt = Math.max(2_000, 2 * (percentile(latency(loadStart, stoppedAt), 99) ?? 0));
    const late = deliveries.filter((d) => d.sentAt >= stoppedAt - 1_000 && d.receivedAt - d.sentAt > prompt);
    const recoveredAt = late.length ? Math.max(...late.map((d) => d.receivedAt)) : stoppedAt;
    const ordered = deliveries.map((d) => d.receivedAt).sort((a, b) => a - b);
    let gap = 0;
    for (let i = 1; i < ordered.length; i++)
      if (ordered[i] >= stoppedAt - 1000) gap = Math.max(gap, ordered[i] - ordered[i - 1]);
    const figures = {
      events,
      requests: outcomes.length,
      refused503: outcomes.filter((o) => o.status === 503).length,
      deliveriesConsumed: consumed,
      duplicatesAbsorbedByInbox: consumed - 2 * events,
      stoppedNode: cluster.nodes[leaderIndex].name,
      leadersBefore,
      leadersAfter,
      nodeStopTookMs: stoppedIn,
      nodeDownMs: upAt - stoppedAt,
      eventsPerSecond: {
        offered: RATE,
        before: rate(loadStart + 1000, stoppedAt),
        during: rate(stoppedAt, upAt),
        after: rate(upAt, loadEnd),
      },
      latencyMs: {
        beforeP50: percentile(latency(loadStart, stoppedAt), 50),
        beforeP99: percentile(latency(loadStart, stoppedAt), 99),
        duringP99: percentile(latency(stoppedAt, upAt), 99),
        duringMax: percentile(latency(stoppedAt, upAt), 100),
        afterP99: percentile(latency(upAt, loadEnd), 99),
      },
      longestDeliveryGapMs: gap,
      promptMs: prompt,
      recoveredAfterStopMs: recoveredAt - stoppedAt,
      recoveredAfterNodeBackMs: Math.max(0, recoveredAt - upAt),
      connectionsMoved: logged(/amqp connection lost/).length,
      totalMsIncludingClusterStart: Date.now() - startedAt,
    };
    console.log(`broker cluster failover: ${JSON.stringify(figures)}`);

    // The stop hit the queue leaders and every process's connection, and the leaders moved off it.
    expect(leadersBefore.every((l) => l === cluster.nodes[leaderIndex].name)).toBe(true);
    expect(leadersAfter.some((l) => l === cluster.nodes[leaderIndex].name)).toBe(false);
    expect(figures.connectionsMoved).toBeGreaterThanOrEqual(4);
    // Events kept flowing while the node was down, at the offered rate once it was back.
    expect(figures.eventsPerSecond.during).toBeGreaterThan(RATE / 2);
    expect(figures.eventsPerSecond.after).toBeGreaterThan(RATE * 0.8);
    // Delivery caught up within 20 s of the node's return (its rejoin moves no leader back).
    expect(figures.recoveredAfterNodeBackMs).toBeLessThan(20_000);
    expect(figures.duplicatesAbsorbedByInbox).toBeGreaterThanOrEqual(0);
  }, 120_000);
});
