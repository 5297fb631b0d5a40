// A RabbitMQ cluster of the test's own, from the machine's rabbitmq-server (Debian's package).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../db/embedded-postgres';

/** Where Debian's package puts the scripts (/usr/sbin/rabbitmq-server would `su` to the rabbitmq user). */
export const RABBITMQ_BIN = process.env.RABBITMQ_BIN ?? '/usr/lib/rabbitmq/bin';

export interface ClusterNode {
  /** Erlang node name, `hwp<run>-<n>@localhost`: never the machine's own `rabbit@localhost`. */
  name: string;
  amqpPort: number;
  /** Erlang distribution (inter-node and CLI) port. */
  distPort: number;
  /** `amqp://guest:guest@127.0.0.1:<amqpPort>`. */
  url: string;
}

export interface QueueLeader {
  name: string;
  type: string;
  /** Node of the queue's leader (quorum) or its only replica (classic). */
  leader: string;
  members: string[];
}

export interface RabbitCluster {
  nodes: ClusterNode[];
  /** The nodes' URLs separated by commas, in node order: what AMQP_URL takes. */
  amqpUrl: string;
  /** Stops node `index` (its Erlang VM exits); `kill` sends SIGKILL instead of asking it to stop. */
  stopNode(index: number, options?: { kill?: boolean }): Promise<void>;
  /** Starts node `index` again on its data; it rejoins the cluster. Resolves once it has booted. */
  startNode(index: number): Promise<void>;
  isRunning(index: number): boolean;
  /** `rabbitmqctl -n <node> <args>` (against the first running node when `index` is omitted). */
  ctl(args: string[], index?: number): Promise<string>;
  /** Queues whose name starts with `prefix`, with the node of their leader. */
  queueLeaders(prefix: string): Promise<QueueLeader[]>;
  /** Kills every node and removes its folders; safe to call twice. */
  destroy(): Promise<void>;
}

export interface RabbitClusterOptions {
  /** Nodes (default 3). */
  size?: number;
  /** Longest wait for a node to boot (default 60 s). */
  bootTimeoutMs?: number;
}

interface RunningNode extends ClusterNode {
  env: NodeJS.ProcessEnv;
  dir: string;
  process: ChildProcess | null;
  exited: Promise<void> | null;
}

/**
 * Every node group started in this process, and every cluster folder: killed and removed at exit,
 * even when a test timed out half-way through starting its cluster.
 */
const live = new Set<number>();
const folders = new Set<string>();
process.once('exit', () => {
  for (const pid of live) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether this machine can run a cluster (the package's scripts are there). */
export function canStartRabbitCluster(): boolean {
  return existsSync(join(RABBITMQ_BIN, 'rabbitmq-server')) && existsSync(join(RABBITMQ_BIN, 'rabbitmqctl'));
}

/**
 * Starts `size` RabbitMQ nodes of the machine's installation, each with its own node name, AMQP and
 * distribution ports, data and log folders (RABBITMQ_MNESIA_BASE, RABBITMQ_LOG_BASE) under one temp
 * folder and one Erlang cookie, no plugins, listening on 127.0.0.1 only; then joins nodes 2..n to
 * node 1 with `rabbitmqctl join_cluster`. The machine's own broker (rabbit@localhost on 5672) is never
 * touched: other node names and ports, and its config files are not read (RABBITMQ_CONF_ENV_FILE and
 * RABBITMQ_CONFIG_FILE point into the temp folder). The nodes share the machine's epmd.
 */
export async function startRabbitCluster(options: RabbitClusterOptions = {}): Promise<RabbitCluster> {
  if (!canStartRabbitCluster())
    throw new Error(`no RabbitMQ scripts in ${RABBITMQ_BIN} (Debian's rabbitmq-server)`);
  const size = options.size ?? 3;
  const bootTimeoutMs = options.bootTimeoutMs ?? 60_000;
  const run = randomBytes(3).toString('hex');
  const base = mkdtempSync(join(tmpdir(), 'hwp-rabbit-cluster-'));
  folders.add(base);
  // The CLI tools and the nodes read the cookie from $HOME; it must be private to its owner.
  const cookie = join(base, '.erlang.cookie');
  writeFileSync(cookie, randomBytes(24).toString('hex').toUpperCase());
  chmodSync(cookie, 0o400);
  const envFile = join(base, 'rabbitmq-env.conf');
  writeFileSync(envFile, '# empty: keeps /etc/rabbitmq/rabbitmq-env.conf (NODENAME=rabbit@localhost) out\n');
  const plugins = join(base, 'enabled_plugins');
  writeFileSync(plugins, '[].\n');
  const common: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: base,
    LANG: 'C.UTF-8',
    RABBITMQ_CONF_ENV_FILE: envFile,
    RABBITMQ_ENABLED_PLUGINS_FILE: plugins,
  };

  const nodes: RunningNode[] = [];
  for (let i = 1; i <= size; i++) {
    const [amqpPort, distPort] = [await freePort(), await freePort()];
    const dir = join(base, `node${i}`);
    mkdirSync(dir);
    const config = join(dir, 'rabbitmq.conf');
    writeFileSync(
      config,
      [
        `listeners.tcp.1 = 127.0.0.1:${amqpPort}`,
        'distribution.listener.interface = 127.0.0.1',
        'loopback_users.guest = true',
        // A node of a 3-node cluster with one node down must keep serving.
        'cluster_partition_handling = pause_minority',
        'log.console = false',
        'log.file.level = info',
        '',
      ].join('\n'),
    );
    const name = `hwp${run}-${i}@localhost`;
    nodes.push({
      name,
      amqpPort,
      distPort,
      url: `amqp://guest:guest@127.0.0.1:${amqpPort}`,
      dir,
      process: null,
      exited: null,
      env: {
        ...common,
        RABBITMQ_NODENAME: name,
        RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
        RABBITMQ_NODE_PORT: String(amqpPort),
        RABBITMQ_DIST_PORT: String(distPort),
        RABBITMQ_CONFIG_FILE: config,
        RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
        RABBITMQ_LOG_BASE: join(dir, 'log'),
        RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
      },
    });
  }

  function ctlOn(node: ClusterNode, args: string[], timeoutMs = 60_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        join(RABBITMQ_BIN, 'rabbitmqctl'),
        ['-q', '-n', node.name, ...args],
        { env: common, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error)
            reject(new Error(`rabbitmqctl ${args.join(' ')} on ${node.name}: ${stderr || error.message}`));
          else resolve(stdout);
        },
      );
    });
  }

  function spawnNode(node: RunningNode): void {
    const out = openSync(join(node.dir, 'console.log'), 'a');
    // Its own process group, so the Erlang VM and its helpers go with one signal.
    const child = spawn(join(RABBITMQ_BIN, 'rabbitmq-server'), [], {
      env: node.env,
      cwd: node.dir,
      detached: true,
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    node.process = child;
    if (child.pid) live.add(child.pid);
    node.exited = new Promise<void>((resolve) => {
      child.once('exit', () => {
        if (child.pid) live.delete(child.pid);
        if (node.process === child) node.process = null;
        resolve();
      });
    });
  }

  /** The node answers once it is registered with epmd and has booted: ask until then. */
  async function awaitBoot(node: RunningNode): Promise<void> {
    const deadline = Date.now() + bootTimeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (!node.process) throw new Error(`${node.name} exited while booting (see ${node.dir}/log)`);
      try {
        await ctlOn(node, ['await_startup', '--timeout', '30'], 35_000);
        return;
      } catch (error) {
        last = (error as Error).message;
        await sleep(500);
      }
    }
    throw new Error(`${node.name} did not boot in ${bootTimeoutMs} ms: ${last}`);
  }

  async function kill(node: RunningNode): Promise<void> {
    const child = node.process;
    if (!child?.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await node.exited;
  }

  let destroyed = false;
  const cluster: RabbitCluster = {
    nodes: nodes.map(({ name, amqpPort, distPort, url }) => ({ name, amqpPort, distPort, url })),
    amqpUrl: nodes.map((node) => node.url).join(','),
    isRunning: (index) => nodes[index].process !== null,
    async stopNode(index, stopOptions = {}) {
      const node = nodes[index];
      if (stopOptions.kill) return kill(node);
      await ctlOn(node, ['stop']);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([node.exited, new Promise((resolve) => (timer = setTimeout(resolve, 15_000)))]);
      clearTimeout(timer);
      await kill(node);
    },
    async startNode(index) {
      const node = nodes[index];
      if (node.process) return;
      spawnNode(node);
      await awaitBoot(node);
    },
    ctl(args, index) {
      const node = index === undefined ? nodes.find((n) => n.process) : nodes[index];
      if (!node) return Promise.reject(new Error('no node of the cluster is running'));
      return ctlOn(node, args);
    },
    async queueLeaders(prefix) {
      const out = await cluster.ctl([
        'list_queues',
        'name',
        'type',
        'leader',
        'members',
        '--formatter',
        'json',
      ]);
      const rows = JSON.parse(out || '[]') as {
        name: string;
        type: string;
        leader?: string;
        members?: string[];
      }[];
      return rows
        .filter((row) => row.name.startsWith(prefix))
        .map((row) => ({
          name: row.name,
          type: row.type,
          leader: row.leader ?? '',
          members: row.members ?? [],
        }));
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await Promise.all(nodes.map(kill));
      rmSync(base, { recursive: true, force: true });
      folders.delete(base);
    },
  };

  try {
    for (const node of nodes) spawnNode(node);
    await Promise.all(nodes.map(awaitBoot));
    // One at a time: a join resets the joining node and copies the cluster's schema from node 1.
    for (const node of nodes.slice(1)) {
      await ctlOn(node, ['stop_app']);
      await ctlOn(node, ['join_cluster', nodes[0].name]);
      await ctlOn(node, ['start_app']);
    }
    const status = await ctlOn(nodes[0], ['cluster_status', '--formatter', 'json']);
    const running = (JSON.parse(status) as { running_nodes: string[] }).running_nodes;
    if (running.length !== size) throw new Error(`cluster has ${running.length} running nodes, not ${size}`);
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
