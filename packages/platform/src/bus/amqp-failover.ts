// The broker connection over the addresses of one broker or of a cluster's nodes, with failover.
import { EventEmitter } from 'node:events';
import * as amqp from 'amqplib';

export interface FailoverConnectionOptions {
  /** Tried in this order; at least one. */
  urls: readonly string[];
  /** `connection_name` the broker shows for the connection. */
  serviceName: string;
  /** Wait before the first round after a drop (default 250 ms); doubles per failed round. */
  reconnectInitialDelayMs: number;
  /** Cap of that wait (default 10000 ms). */
  reconnectMaxDelayMs: number;
  /** Bounds each attempt (TCP connect and AMQP handshake), so a black-holed address cannot stall a round. */
  connectTimeoutMs?: number;
  /** Runs on every new connection before it counts as connected; a throw makes it try the next address. */
  setup: (model: amqp.ChannelModel, url: string) => Promise<void>;
}

/** The `reconnect-scheduled` event's argument. */
export interface ReconnectScheduled {
  /** Failed rounds in a row (every address tried once per round). */
  attempt: number;
  delay: number;
  error: Error;
}

const JITTER = 0.2;

function toError(value: unknown, fallback: string): Error {
  if (value instanceof Error) return value;
  return new Error(value ? String(value) : fallback);
}

/**
 * A connection to whichever of `urls` answers, kept until close(). amqplib connects to one address
 * only (amqp-node/amqplib#319: "loop through the hosts until one works" is left to the caller), so
 * the rounds are ours:
 *
 * - at start the addresses are tried in order without waiting between them: the first that answers
 *   (and whose `setup` succeeds) wins;
 * - when the connection drops, the next round starts with the address after the one that dropped,
 *   so a replica moves to another node of the cluster instead of waiting for its node to return;
 * - between rounds it backs off exponentially with jitter (`reconnectInitialDelayMs` doubling up to
 *   `reconnectMaxDelayMs`), and it never gives up.
 *
 * Events, as amqplib's recovering connection names them: `connect (model, url)`, `disconnect (error)`,
 * `connect-failed (error, url)`, `reconnect-scheduled (ReconnectScheduled)`, `blocked (reason)`,
 * `unblocked`, `error (error)`.
 */
export class FailoverConnection extends EventEmitter {
  private readonly urls: readonly string[];
  private current: amqp.ChannelModel | null = null;
  /** Index of the address the next round starts with. */
  private startAt = 0;
  private failedRounds = 0;
  private timer: NodeJS.Timeout | null = null;
  private roundRunning = false;
  private stopped = false;
  private readonly firstConnect: Promise<void>;
  /** The address of the live connection, or null. */
  connectedUrl: string | null = null;
  private settleFirst: { resolve: () => void; reject: (error: Error) => void } | null = null;

  constructor(private readonly options: FailoverConnectionOptions) {
    super();
    if (options.urls.length === 0) throw new Error('no broker address');
    this.urls = [...options.urls];
    this.firstConnect = new Promise<void>((resolve, reject) => {
      this.settleFirst = { resolve, reject };
    });
    // Nobody may wait for it (a service starts while the broker is down); close() rejects it.
    this.firstConnect.catch(() => undefined);
    // Deferred so listeners attached right after construction see the first attempts.
    setImmediate(() => void this.runRound());
  }

  /** Resolves on the first connection; rejects if closed before. */
  waitForConnect(): Promise<void> {
    return this.firstConnect;
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.settleFirst?.reject(new Error('Connection closed'));
    this.settleFirst = null;
    const model = this.current;
    this.current = null;
    this.connectedUrl = null;
    if (model) await model.close().catch(() => undefined);
  }

  /** One pass over every address, starting at `startAt`; schedules the next pass if none answered. */
  private async runRound(): Promise<void> {
    if (this.stopped || this.roundRunning || this.current) return;
    this.roundRunning = true;
    let lastError = new Error('no broker address answered');
    try {
      for (let i = 0; i < this.urls.length && !this.stopped; i++) {
        const index = (this.startAt + i) % this.urls.length;
        const url = this.urls[index];
        try {
          const model = await this.open(url);
          this.adopt(model, index);
          return;
        } catch (error) {
          lastError = toError(error, 'connection attempt failed');
          if (!this.stopped) this.emit('connect-failed', lastError, url);
        }
      }
    } finally {
      this.roundRunning = false;
    }
    if (this.stopped) return;
    this.failedRounds++;
    this.schedule(lastError);
  }

  /** The next round after `failedRounds` failed ones (or a drop, counted as one). */
  private schedule(error: Error): void {
    if (this.stopped || this.timer) return;
    const attempt = Math.max(1, this.failedRounds);
    const { reconnectInitialDelayMs: initial, reconnectMaxDelayMs: max } = this.options;
    // The base stops below the cap by the jitter's share, so jittered delays never exceed it.
    const base = Math.min(max / (1 + JITTER), initial * 2 ** (attempt - 1));
    const delay = Math.max(0, Math.round(base + (Math.random() * 2 - 1) * base * JITTER));
    this.emit('reconnect-scheduled', { attempt, delay, error } satisfies ReconnectScheduled);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runRound();
    }, delay);
  }

  /** Connects to `url` and runs setup on it; closes it again when either fails. */
  private async open(url: string): Promise<amqp.ChannelModel> {
    const model = await amqp.connect(url, {
      clientProperties: { connection_name: this.options.serviceName },
      // Without it Nagle holds a publish's header and body frames until the broker's delayed ACK
      // (~40 ms on Linux) on every event.
      noDelay: true,
      timeout: this.options.connectTimeoutMs ?? 10_000,
    });
    let closedEarly = false;
    // An 'error' event without a listener would crash the process; the 'close' after it matters.
    model.on('error', (error: Error) => {
      if (this.current === model) this.emit('error', error);
    });
    model.on('close', (error?: unknown) => {
      if (this.current === model) this.onClose(model, error);
      else closedEarly = true;
    });
    try {
      if (this.stopped) throw new Error('Connection closed');
      await this.options.setup(model, url);
      if (this.stopped) throw new Error('Connection closed');
      if (closedEarly) throw new Error('connection closed during setup');
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
    return model;
  }

  private adopt(model: amqp.ChannelModel, index: number): void {
    this.current = model;
    this.connectedUrl = this.urls[index];
    this.failedRounds = 0;
    // After a drop the next round starts elsewhere: the node that dropped is the likeliest to be down.
    this.startAt = (index + 1) % this.urls.length;
    model.on('blocked', (reason: string) => this.emit('blocked', reason));
    model.on('unblocked', () => this.emit('unblocked'));
    this.settleFirst?.resolve();
    this.settleFirst = null;
    this.emit('connect', model, this.urls[index]);
  }

  private onClose(model: amqp.ChannelModel, error: unknown): void {
    if (this.current !== model) return;
    this.current = null;
    this.connectedUrl = null;
    if (this.stopped) return;
    const reason = toError(error, 'Connection closed');
    this.emit('disconnect', reason);
    // A short pause even before the first round after a drop: a connection that the broker closes
    // right after it opened must not turn into a busy loop.
    this.failedRounds = 1;
    this.schedule(reason);
  }
}
