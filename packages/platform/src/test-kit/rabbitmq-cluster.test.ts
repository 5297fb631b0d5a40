import * as amqp from 'amqplib';
import { type RabbitCluster, startRabbitCluster } from './rabbitmq-cluster';

describe('a RabbitMQ cluster of the test kit', () => {
  let cluster: RabbitCluster;

  beforeAll(async () => {
    cluster = await startRabbitCluster();
  }, 90_000);

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('runs three joined nodes of its own, none of them the machine broker', async () => {
    const status = JSON.parse(await cluster.ctl(['cluster_status', '--formatter', 'json'])) as {
      running_nodes: string[];
    };
    expect([...status.running_nodes].sort()).toEqual(cluster.nodes.map((n) => n.name).sort());
    for (const node of cluster.nodes) {
      expect(node.name).not.toBe('rabbit@localhost');
      expect(node.amqpPort).not.toBe(5672);
    }
    expect(cluster.amqpUrl.split(',')).toHaveLength(3);
  });

  it('keeps a quorum queue and its messages when the node of its leader stops, and takes the node back', async () => {
    const queue = `kit.quorum.${Date.now()}`;
    const first = await amqp.connect(cluster.nodes[0].url);
    const ch = await first.createConfirmChannel();
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    for (let i = 0; i < 10; i++) ch.sendToQueue(queue, Buffer.from(String(i)), { persistent: true });
    await ch.waitForConfirms();
    await first.close();
    const [before] = await cluster.queueLeaders(queue);
    expect(before.type).toBe('quorum');
    expect(before.members).toHaveLength(3);
    const leaderIndex = cluster.nodes.findIndex((n) => n.name === before.leader);
    expect(leaderIndex).toBeGreaterThanOrEqual(0);

    await cluster.stopNode(leaderIndex);
    expect(cluster.isRunning(leaderIndex)).toBe(false);
    const other = cluster.nodes[(leaderIndex + 1) % 3];
    const conn = await amqp.connect(other.url);
    const reader = await conn.createChannel();
    const got: string[] = [];
    for (let tries = 0; got.length < 10 && tries < 100; tries++) {
      const message = await reader.get(queue, { noAck: true }).catch(() => false as const);
      if (message) got.push(message.content.toString());
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(got).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    await conn.close();

    await cluster.startNode(leaderIndex);
    const [after] = await cluster.queueLeaders(queue);
    expect(after.leader).not.toBe(before.leader);
    expect(after.members).toHaveLength(3);
    await cluster.ctl(['delete_queue', queue]);
  }, 60_000);
});
