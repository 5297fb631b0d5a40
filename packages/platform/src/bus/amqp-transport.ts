import { EVENTS_EXCHANGE, type EventEnvelope } from '@hwp/contracts';
import * as amqp from 'amqplib';
import {
  broadcastQueueNameOf,
  DEFAULT_HANDLER_TIMEOUT_MS,
  type MessageTransport,
  newReplicaId,
  queueNameOf,
  RecentIds,
  type SubscribeOptions,
} from './bus';
import { decodeEnvelope } from './envelope';
import { type BusLogger, describeError, guardLogger, isPermanentFailure, silentLogger } from './logger';
import { runHandler, withDeadline } from './timeouts';

export interface AmqpTransportOptions {
  /** `amqp://user:pass@host:port/vhost`. */
  url: string;
  /** Consumers' queues are named `<serviceName>.<consumer>`. */
  serviceName: string;
  logger?: BusLogger;
  /** Deliveries before a failing message goes to `<queue>.dlq` (default 5). */
  maxAttempts?: number;
  /** Time a failed message waits in `<queue>.retry` before it is delivered again (default 1000 ms). */
  retryDelayMs?: number;
  /** Unacknowledged messages per consumer (default 10). */
  prefetch?: number;
  /** A handler still running after this long counts as failed (default 5 minutes). */
  handlerTimeoutMs?: number;
  /** How long publish() waits for the broker's confirm (default 5000 ms). */
  confirmTimeoutMs?: number;
  /** First reconnect delay (default 250 ms); doubles per failed attempt. */
  reconnectInitialDelayMs?: number;
  /** Cap of the reconnect delay (default 10000 ms). */
  reconnectMaxDelayMs?: number;
  /**
   * Prefix of the exchange and queue names, so several environments (or test runs) share one broker
   * without seeing each other's messages. Default none: exchange `hwp.events`.
   */
  namespace?: string;
  /**
   * Deletes a consumer's queues after they have been unused this long (`x-expires`). For ephemeral
   * environments only: a queue declared with it cannot be redeclared without it.
   */
  queueExpiresMs?: number;
  /** AMQP heartbeat, which detects a silently dead connection (default 10 s). */
  heartbeatSeconds?: number;
  /** How long start() waits for the first connection before carrying on in the background (default 5000 ms). */
  startTimeoutMs?: number;
  /** Names this process's broadcast queues (default random); unique among the service's replicas. */
  replicaId?: string;
}

/** Header with the 1-based number of the delivery a message is on. */
export const ATTEMPT_HEADER = 'x-hwp-attempt';
/** Routing key the message was originally published with (a retried message arrives with its queue's name). */
export const ROUTING_KEY_HEADER = 'x-hwp-routing-key';
export const LAST_ERROR_HEADER = 'x-hwp-last-error';
export const FAILED_AT_HEADER = 'x-hwp-failed-at';
export const SOURCE_QUEUE_HEADER = 'x-hwp-source-queue';

// amqplib refuses header tables above 64 KiB; an error message is never worth that much.
const MAX_HEADER_ERROR = 4000;
const REATTACH_DELAY_MS = 1000;
const CLOSE_STEP_TIMEOUT_MS = 5000;

type Handler = (envelope: EventEnvelope) => Promise<void>;

interface Subscription {
  consumer: string;
  queue: string;
  /** One exclusive queue per process (SubscribeOptions.broadcast): no retry or dead-letter queues. */
  broadcast: boolean;
  /** Ids handled on a broadcast queue, to skip redeliveries (no inbox there). */
  seen: RecentIds | null;
  patterns: string[];
  maxAttempts: number;
  retryDelayMs: number;
  prefetch: number;
  handlerTimeoutMs: number;
  handler: Handler;
  /** Connection the consumer currently runs on, or is being set up on. */
  model: amqp.ChannelModel | null;
  channel: amqp.ConfirmChannel | null;
  consumerTag: string | null;
  /** Deliveries in a handler, with the time each started. */
  inFlight: Map<Promise<void>, number>;
  /** Since when the subscription has had no consumer on the broker (null while it consumes). */
  detachedSince: number | null;
}

/** Runs an amqplib call that may throw synchronously (closed channel) or reject; never throws. */
async function quietly(what: () => Promise<unknown>, ms: number): Promise<void> {
  try {
    await withDeadline(Promise.resolve().then(what), ms, 'amqp call');
  } catch {
    // Closing is best effort: the connection close that follows releases everything anyway.
  }
}

function readAttempt(headers: amqp.MessagePropertyHeaders | undefined): number {
  const raw: unknown = headers?.[ATTEMPT_HEADER];
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
  return Number.isInteger(value) && value >= 1 ? value : 1;
}

/** Application headers of a delivery, without the broker's dead-lettering bookkeeping. */
function appHeaders(headers: amqp.MessagePropertyHeaders | undefined): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key === 'x-death' || key.startsWith('x-first-death') || key.startsWith('x-last-death')) continue;
    result[key] = value;
  }
  return result;
}

function withHeartbeat(url: string, seconds: number): string {
  try {
    const parsed = new URL(url);
    if (parsed.searchParams.has('heartbeat')) return url;
    parsed.searchParams.set('heartbeat', String(seconds));
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Password-free URL for logs. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'amqp://<unparsable>';
  }
}

/**
 * RabbitMQ transport on the durable topic exchange `hwp.events`.
 *
 * The connection uses amqplib's recovery: when the broker goes away it reconnects with exponential
 * back-off, and each new connection re-creates the publish channel and every subscription. While
 * disconnected publish() rejects at once, so the outbox relay keeps the rows and retries.
 *
 * Failed messages are not requeued in place (that would spin and block the queue): they are
 * republished to `<queue>.retry`, whose expired messages are dead-lettered back to `<queue>`, with
 * the attempt number in a header; after `maxAttempts` they are moved to `<queue>.dlq`.
 */
export class AmqpTransport implements MessageTransport {
  readonly kind = 'amqp' as const;
  readonly serviceName: string;
  /** This process among the service's replicas; broadcast queues are named after it. */
  readonly replicaId: string;

  private readonly url: string;
  private readonly logger: BusLogger;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly prefetch: number;
  private readonly handlerTimeoutMs: number;
  private readonly confirmTimeoutMs: number;
  private readonly reconnectInitialDelayMs: number;
  private readonly reconnectMaxDelayMs: number;
  private readonly startTimeoutMs: number;
  private readonly namespace: string;
  private readonly exchange: string;
  private readonly queueArguments: Record<string, unknown>;

  private recovering: Promise<amqp.RecoveringChannelModel> | null = null;
  private model: amqp.ChannelModel | null = null;
  private publishChannel: amqp.ConfirmChannel | null = null;
  private readonly subscriptions: Subscription[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** What to run instead when close() clears a timer (a retry wait that must not hang). */
  private readonly cancellations = new Map<NodeJS.Timeout, () => void>();
  private connectedWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private everConnected = false;
  private closing = false;

  constructor(options: AmqpTransportOptions) {
    this.serviceName = options.serviceName;
    this.replicaId = options.replicaId ?? newReplicaId();
    this.url = withHeartbeat(options.url, options.heartbeatSeconds ?? 10);
    this.logger = guardLogger(options.logger ?? silentLogger);
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.retryDelayMs = Math.max(0, options.retryDelayMs ?? 1000);
    this.prefetch = Math.max(1, options.prefetch ?? 10);
    this.handlerTimeoutMs = Math.max(1, options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS);
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 5000;
    this.reconnectInitialDelayMs = options.reconnectInitialDelayMs ?? 250;
    this.reconnectMaxDelayMs = options.reconnectMaxDelayMs ?? 10_000;
    this.startTimeoutMs = options.startTimeoutMs ?? 5000;
    this.namespace = options.namespace ?? '';
    this.exchange = `${this.namespace}${EVENTS_EXCHANGE}`;
    this.queueArguments = options.queueExpiresMs ? { 'x-expires': options.queueExpiresMs } : {};
  }

  /**
   * Connects, waiting at most `startTimeoutMs`. A broker that is down at boot does not stop the
   * service: the transport keeps trying, publish() fails meanwhile (the outbox keeps the events), and
   * ping() reports it to the readiness probe.
   */
  async start(): Promise<void> {
    await this.connect({ waitForConnection: false });
    try {
      await this.waitUntilConnected(this.startTimeoutMs);
    } catch {
      if (this.closing) return;
      this.logger.warn(
        { url: redact(this.url), waitedMs: this.startTimeoutMs },
        'amqp broker not reachable yet; continuing and reconnecting in the background',
      );
    }
  }

  /**
   * Starts connecting; from then on the transport reconnects by itself until close(). Resolves once
   * connected unless `waitForConnection` is false (a service can start while the broker is down: the
   * outbox holds its events).
   */
  async connect(options: { waitForConnection?: boolean } = {}): Promise<void> {
    if (this.closing) throw new Error('amqp transport is closed');
    // Kept as a promise so concurrent callers share one connection instead of racing to open two.
    this.recovering ??= this.openRecovering().catch((error: unknown) => {
      this.recovering = null;
      throw error;
    });
    const recovering = await this.recovering;
    if (options.waitForConnection !== false) await recovering.waitForConnect();
  }

  private async openRecovering(): Promise<amqp.RecoveringChannelModel> {
    const recovering = await amqp.connect(this.url, {
      clientProperties: { connection_name: this.serviceName },
      // Without it Nagle holds a publish's header and body frames until the broker's delayed ACK
      // (~40 ms on Linux) on every event.
      noDelay: true,
      // Bounds each connect attempt, so a black-holed broker address cannot stall recovery.
      timeout: 10_000,
      recovery: {
        initialDelay: this.reconnectInitialDelayMs,
        maxDelay: this.reconnectMaxDelayMs,
        factor: 2,
        jitter: 0.2,
        waitForConnect: false,
        setup: (model: amqp.ChannelModel) => this.setupConnection(model),
      },
    });
    this.watchRecovery(recovering);
    return recovering;
  }

  /** Resolves once connected (publish channel ready); rejects after `timeoutMs`. */
  waitUntilConnected(timeoutMs: number): Promise<void> {
    if (this.isConnected()) return Promise.resolve();
    return withDeadline(
      new Promise<void>((resolve, reject) => this.connectedWaiters.push({ resolve, reject })),
      timeoutMs,
      'waiting for the broker',
    );
  }

  isConnected(): boolean {
    return !this.closing && this.model !== null && this.publishChannel !== null;
  }

  async ping(): Promise<void> {
    const channel = this.publishChannel;
    if (!this.isConnected() || !channel) throw new Error('amqp transport is not connected');
    // A round trip, so a connection that died without a close frame is caught too.
    await withDeadline(channel.checkExchange(this.exchange), this.confirmTimeoutMs, 'broker ping');
  }

  /**
   * Subscriptions that have had no consumer on the broker for longer than `olderThanMs` while the
   * connection is up, and handlers running longer than that. Nothing while disconnected: ping()
   * reports the broker itself then.
   */
  stalledConsumers(olderThanMs: number): string[] {
    if (!this.isConnected()) return [];
    const now = Date.now();
    const problems: string[] = [];
    for (const sub of this.subscriptions) {
      if (sub.detachedSince !== null && now - sub.detachedSince > olderThanMs) {
        problems.push(
          `consumer ${sub.queue} not consuming for ${Math.round((now - sub.detachedSince) / 1000)} s`,
        );
      }
      const oldest = Math.min(...sub.inFlight.values());
      if (Number.isFinite(oldest) && now - oldest > olderThanMs) {
        problems.push(
          `consumer ${sub.queue} has a handler running for ${Math.round((now - oldest) / 1000)} s`,
        );
      }
    }
    return problems;
  }

  /** The dead-letter queue of a consumer queue named `<serviceName>.<consumer>` (namespace added). */
  deadLetterQueueOf(queue: string): string {
    return `${this.namespace}${queue}.dlq`;
  }

  /** Dead-letter queues of this transport's subscriptions. */
  deadLetterQueueNames(): string[] {
    return this.subscriptions.filter((sub) => !sub.broadcast).map((sub) => `${sub.queue}.dlq`);
  }

  async publish(envelope: EventEnvelope): Promise<void> {
    const channel = this.publishChannel;
    if (!this.isConnected() || !channel) throw new Error('amqp transport is not connected');
    await this.confirmed(
      (done) =>
        channel.publish(
          this.exchange,
          envelope.type,
          Buffer.from(JSON.stringify(envelope)),
          {
            persistent: true,
            contentType: 'application/json',
            messageId: envelope.id,
            type: envelope.type,
            correlationId: envelope.correlationId,
            appId: this.serviceName,
            timestamp: Math.floor(Date.parse(envelope.occurredAt) / 1000) || undefined,
          },
          done,
        ),
      `publish of ${envelope.type} ${envelope.id}`,
    );
  }

  /**
   * Declares `<serviceName>.<consumer>` (plus its retry and dead-letter queues), binds it to each
   * pattern and consumes it; a broadcast consumer gets its own exclusive, auto-deleted queue
   * `<serviceName>.<consumer>.<replicaId>` instead. When disconnected the subscription is registered
   * and set up as soon as the connection is back; it is set up again after every reconnect.
   */
  async subscribe(options: SubscribeOptions, handler: Handler): Promise<void> {
    if (this.closing) throw new Error('amqp transport is closed');
    if (options.patterns.length === 0) throw new Error(`consumer ${options.consumer} has no patterns`);
    const queue = `${this.namespace}${
      options.broadcast
        ? broadcastQueueNameOf(this.serviceName, options.consumer, this.replicaId)
        : queueNameOf(this.serviceName, options.consumer)
    }`;
    if (this.subscriptions.some((s) => s.queue === queue)) {
      throw new Error(`consumer ${options.consumer} is already subscribed on this transport`);
    }
    const subscription: Subscription = {
      consumer: options.consumer,
      queue,
      broadcast: options.broadcast === true,
      seen: options.broadcast ? new RecentIds() : null,
      patterns: [...options.patterns],
      maxAttempts: Math.max(1, options.maxAttempts ?? this.maxAttempts),
      retryDelayMs: Math.max(0, options.retryDelayMs ?? this.retryDelayMs),
      prefetch: Math.max(1, options.prefetch ?? this.prefetch),
      handlerTimeoutMs: Math.max(1, options.handlerTimeoutMs ?? this.handlerTimeoutMs),
      handler,
      model: null,
      channel: null,
      consumerTag: null,
      inFlight: new Map(),
      detachedSince: Date.now(),
    };
    this.subscriptions.push(subscription);
    const model = this.model;
    if (!model) {
      this.logger.info({ queue }, 'amqp not connected; consumer starts once it is');
      return;
    }
    try {
      await this.attach(subscription, model);
    } catch (error) {
      if (this.model === model) {
        // The broker refused the topology itself: report it rather than retrying forever.
        this.subscriptions.splice(this.subscriptions.indexOf(subscription), 1);
        throw error;
      }
      this.logger.warn(
        { queue, err: describeError(error) },
        'connection lost while subscribing; will resubscribe',
      );
    }
  }

  /** Cancels consumers, lets running handlers finish, closes channels and the connection. Never throws. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const cancelled of this.cancellations.values()) cancelled();
    this.cancellations.clear();
    for (const waiter of this.connectedWaiters.splice(0))
      waiter.reject(new Error('amqp transport is closed'));
    for (const sub of this.subscriptions) {
      if (sub.channel && sub.consumerTag) {
        const { channel, consumerTag } = sub;
        await quietly(() => channel.cancel(consumerTag), CLOSE_STEP_TIMEOUT_MS);
      }
    }
    const running = this.subscriptions.flatMap((sub) => [...sub.inFlight.keys()]);
    if (running.length > 0) {
      await withDeadline(Promise.allSettled(running), CLOSE_STEP_TIMEOUT_MS, 'handlers').catch(() => {
        this.logger.warn({ running: running.length }, 'closing amqp transport with handlers still running');
      });
    }
    for (const sub of this.subscriptions) {
      const channel = sub.channel;
      sub.channel = null;
      if (channel) await quietly(() => channel.close(), CLOSE_STEP_TIMEOUT_MS);
    }
    const publishChannel = this.publishChannel;
    this.publishChannel = null;
    if (publishChannel) await quietly(() => publishChannel.close(), CLOSE_STEP_TIMEOUT_MS);
    const recovering = this.recovering;
    if (recovering) await quietly(async () => (await recovering).close(), CLOSE_STEP_TIMEOUT_MS);
    this.model = null;
  }

  private watchRecovery(recovering: amqp.RecoveringChannelModel): void {
    recovering.on('connect', () => {
      this.logger.info(
        { url: redact(this.url), reconnect: this.everConnected },
        this.everConnected ? 'amqp reconnected' : 'amqp connected',
      );
      this.everConnected = true;
    });
    recovering.on('disconnect', (error: Error) => {
      this.logger.warn({ err: describeError(error) }, 'amqp connection lost');
    });
    recovering.on('connect-failed', (error: Error) => {
      this.logger.debug({ err: describeError(error) }, 'amqp connect attempt failed');
    });
    recovering.on('reconnect-scheduled', (info: { attempt: number; delay: number; error: Error }) => {
      this.logger.info(
        { attempt: info.attempt, delayMs: info.delay, err: describeError(info.error) },
        'amqp reconnect scheduled',
      );
    });
    recovering.on('reconnect-failed', (error: Error) => {
      this.logger.error({ err: describeError(error) }, 'amqp recovery gave up');
    });
    recovering.on('blocked', (reason: string) =>
      this.logger.warn({ reason }, 'amqp connection blocked by broker'),
    );
    recovering.on('unblocked', () => this.logger.info({}, 'amqp connection unblocked'));
    // Without a listener an 'error' event would crash the process; the close that follows drives recovery.
    recovering.on('error', (error: Error) =>
      this.logger.warn({ err: describeError(error) }, 'amqp connection error'),
    );
  }

  /** Runs on every new connection, before amqplib reports it connected; a throw makes it retry. */
  private async setupConnection(model: amqp.ChannelModel): Promise<void> {
    model.on('error', (error: Error) =>
      this.logger.debug({ err: describeError(error) }, 'amqp connection error'),
    );
    model.once('close', () => this.onConnectionClosed(model));
    const channel = await model.createConfirmChannel();
    channel.on('error', (error: Error) =>
      this.logger.warn({ err: describeError(error) }, 'amqp publish channel error'),
    );
    channel.once('close', () => this.onPublishChannelClosed(model, channel));
    await channel.assertExchange(this.exchange, 'topic', { durable: true });
    this.model = model;
    this.publishChannel = channel;
    for (const waiter of this.connectedWaiters.splice(0)) waiter.resolve();
    // Consumers are set up outside this function: one broken subscription must not keep the
    // connection, and with it publishing, from coming up.
    for (const sub of this.subscriptions) void this.ensureAttached(sub);
  }

  private onConnectionClosed(model: amqp.ChannelModel): void {
    if (this.model !== model) return;
    this.model = null;
    this.publishChannel = null;
    for (const sub of this.subscriptions) {
      if (sub.model === model) {
        sub.model = null;
        sub.channel = null;
        sub.consumerTag = null;
        sub.detachedSince ??= Date.now();
      }
    }
  }

  private onPublishChannelClosed(model: amqp.ChannelModel, channel: amqp.ConfirmChannel): void {
    if (this.publishChannel === channel) this.publishChannel = null;
    // When the whole connection is going, its 'close' follows in the same tick; look again after it.
    setImmediate(() => {
      if (this.closing || this.model !== model) return;
      // The connection is fine but its publish channel died (a channel-level error): bouncing the
      // connection lets recovery rebuild everything the same way it does after an outage.
      this.logger.warn({}, 'amqp publish channel closed; reconnecting');
      this.onConnectionClosed(model);
      void quietly(() => model.close(), CLOSE_STEP_TIMEOUT_MS);
    });
  }

  /** Sets a subscription up on the current connection, retrying later when that fails. */
  private async ensureAttached(sub: Subscription): Promise<void> {
    const model = this.model;
    if (this.closing || !model || sub.model === model || !this.subscriptions.includes(sub)) return;
    try {
      await this.attach(sub, model);
    } catch (error) {
      if (this.closing || this.model !== model) return;
      this.logger.error(
        { queue: sub.queue, err: describeError(error) },
        'amqp consumer setup failed; retrying',
      );
      this.later(REATTACH_DELAY_MS, () => void this.ensureAttached(sub));
    }
  }

  private async attach(sub: Subscription, model: amqp.ChannelModel): Promise<void> {
    if (sub.model === model) return;
    sub.model = model;
    let channel: amqp.ConfirmChannel | null = null;
    try {
      channel = await model.createConfirmChannel();
      const ch = channel;
      ch.on('error', (error: Error) =>
        this.logger.warn({ queue: sub.queue, err: describeError(error) }, 'amqp consumer channel error'),
      );
      ch.once('close', () => this.onConsumerChannelClosed(sub, model, ch));
      await ch.assertExchange(this.exchange, 'topic', { durable: true });
      if (sub.broadcast) {
        // Tied to this connection: the broker deletes it when the process (or its connection) goes.
        await ch.assertQueue(sub.queue, { exclusive: true, autoDelete: true, durable: false });
      } else {
        await ch.assertQueue(sub.queue, { durable: true, arguments: this.queueArguments });
        // Expired retries return to the main queue through the default exchange. The delay is set per
        // message (`expiration`) rather than as x-message-ttl so a config change needs no queue redeclare.
        await ch.assertQueue(`${sub.queue}.retry`, {
          durable: true,
          deadLetterExchange: '',
          deadLetterRoutingKey: sub.queue,
          arguments: this.queueArguments,
        });
        await ch.assertQueue(`${sub.queue}.dlq`, { durable: true, arguments: this.queueArguments });
      }
      for (const pattern of sub.patterns) await ch.bindQueue(sub.queue, this.exchange, pattern);
      await ch.prefetch(sub.prefetch);
      sub.channel = ch;
      const { consumerTag } = await ch.consume(sub.queue, (message) => this.onDelivery(sub, ch, message), {
        noAck: false,
      });
      sub.consumerTag = consumerTag;
      sub.detachedSince = null;
      this.logger.info({ queue: sub.queue, patterns: sub.patterns }, 'amqp consumer started');
    } catch (error) {
      if (sub.model === model) {
        sub.model = null;
        sub.channel = null;
        sub.consumerTag = null;
        sub.detachedSince ??= Date.now();
      }
      if (channel) {
        const opened = channel;
        void quietly(() => opened.close(), CLOSE_STEP_TIMEOUT_MS);
      }
      throw error;
    }
  }

  private onConsumerChannelClosed(
    sub: Subscription,
    model: amqp.ChannelModel,
    channel: amqp.ConfirmChannel,
  ): void {
    if (sub.channel !== channel && sub.model !== model) return;
    if (sub.channel === channel) {
      sub.channel = null;
      sub.consumerTag = null;
      sub.detachedSince ??= Date.now();
      sub.model = null;
    }
    if (this.closing) return;
    // When the whole connection went, setupConnection() resubscribes; otherwise only this channel failed.
    this.later(REATTACH_DELAY_MS, () => void this.ensureAttached(sub));
  }

  private onDelivery(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage | null,
  ): void {
    if (message === null) {
      // The broker cancelled the consumer, e.g. because the queue was deleted.
      this.logger.warn({ queue: sub.queue }, 'amqp consumer cancelled by the broker; resubscribing');
      if (sub.channel === channel) {
        sub.model = null;
        sub.channel = null;
        sub.consumerTag = null;
        sub.detachedSince ??= Date.now();
        void quietly(() => channel.close(), CLOSE_STEP_TIMEOUT_MS);
      }
      if (!this.closing) this.later(REATTACH_DELAY_MS, () => void this.ensureAttached(sub));
      return;
    }
    const handle = sub.broadcast
      ? this.handleBroadcast(sub, channel, message)
      : this.handleDelivery(sub, channel, message);
    const run = handle.catch((error: unknown) => {
      this.logger.error({ queue: sub.queue, err: describeError(error) }, 'amqp delivery handling failed');
    });
    sub.inFlight.set(run, Date.now());
    void run.finally(() => sub.inFlight.delete(run));
  }

  private async handleDelivery(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage,
  ): Promise<void> {
    const attempt = readAttempt(message.properties.headers);
    const decoded = decodeEnvelope(message.content);
    if (!decoded.ok) {
      this.logger.error({ queue: sub.queue, reason: decoded.reason }, 'malformed message; dead-lettered');
      await this.moveOn(sub, channel, message, () =>
        this.sendToDeadLetter(sub, channel, message, attempt, decoded.reason),
      );
      return;
    }
    const envelope = decoded.envelope;
    try {
      await runHandler(sub.handler, envelope, sub.handlerTimeoutMs);
    } catch (error) {
      const reason = describeError(error);
      const log = { queue: sub.queue, eventId: envelope.id, type: envelope.type, attempt, err: reason };
      if (attempt >= sub.maxAttempts || isPermanentFailure(error)) {
        this.logger.error(log, 'event handler failed for the last time; dead-lettered');
        await this.moveOn(sub, channel, message, () =>
          this.sendToDeadLetter(sub, channel, message, attempt, reason),
        );
      } else {
        this.logger.warn(log, 'event handler failed; will retry');
        await this.moveOn(sub, channel, message, () => this.sendToRetry(sub, channel, message, attempt));
      }
      return;
    }
    this.settle(channel, message, 'ack');
  }

  /**
   * A delivery on a broadcast queue: no inbox and no retry or dead-letter queues (the queue is this
   * process's alone and dies with it). A failing handler is retried here, holding the message, up to
   * maxAttempts; then the message is dropped and logged. Ids already handled are skipped.
   */
  private async handleBroadcast(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage,
  ): Promise<void> {
    const decoded = decodeEnvelope(message.content);
    if (!decoded.ok) {
      this.logger.error({ queue: sub.queue, reason: decoded.reason }, 'malformed broadcast message; dropped');
      this.settle(channel, message, 'ack');
      return;
    }
    const envelope = decoded.envelope;
    if (sub.seen?.has(envelope.id)) {
      this.settle(channel, message, 'ack');
      return;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await runHandler(sub.handler, envelope, sub.handlerTimeoutMs);
        sub.seen?.add(envelope.id);
        break;
      } catch (error) {
        const log = {
          queue: sub.queue,
          eventId: envelope.id,
          type: envelope.type,
          attempt,
          err: describeError(error),
        };
        if (attempt >= sub.maxAttempts || isPermanentFailure(error) || this.closing) {
          this.logger.error(log, 'broadcast handler failed for the last time; message dropped');
          break;
        }
        this.logger.warn(log, 'broadcast handler failed; will retry');
        await new Promise<void>((resolve) => this.later(sub.retryDelayMs, resolve, resolve));
        if (this.closing) break;
      }
    }
    this.settle(channel, message, 'ack');
  }

  /**
   * Acks a message once its copy is safely in the retry or dead-letter queue. If that republish fails
   * the message is requeued after the retry delay instead, so it is never lost (at worst handled again).
   */
  private async moveOn(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage,
    republish: () => Promise<void>,
  ): Promise<void> {
    try {
      await republish();
    } catch (error) {
      this.logger.error(
        { queue: sub.queue, err: describeError(error) },
        'could not move failed message; requeueing',
      );
      this.later(sub.retryDelayMs, () => this.settle(channel, message, 'requeue'));
      return;
    }
    this.settle(channel, message, 'ack');
  }

  private settle(channel: amqp.ConfirmChannel, message: amqp.ConsumeMessage, how: 'ack' | 'requeue'): void {
    try {
      if (how === 'ack') channel.ack(message);
      else channel.nack(message, false, true);
    } catch (error) {
      // The channel is gone; the broker redelivers the message and the inbox absorbs the repeat.
      this.logger.debug({ err: describeError(error) }, `could not ${how} message on a closed channel`);
    }
  }

  private sendToRetry(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage,
    attempt: number,
  ): Promise<void> {
    const headers = {
      ...appHeaders(message.properties.headers),
      [ATTEMPT_HEADER]: attempt + 1,
      [ROUTING_KEY_HEADER]: this.originalRoutingKey(message),
    };
    return this.confirmed(
      (done) =>
        channel.sendToQueue(
          `${sub.queue}.retry`,
          message.content,
          { ...this.copiedProperties(message), headers, expiration: String(sub.retryDelayMs) },
          done,
        ),
      `retry of a message on ${sub.queue}`,
    );
  }

  private sendToDeadLetter(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage,
    attempt: number,
    reason: string,
  ): Promise<void> {
    const headers = {
      ...appHeaders(message.properties.headers),
      [ATTEMPT_HEADER]: attempt,
      [ROUTING_KEY_HEADER]: this.originalRoutingKey(message),
      [LAST_ERROR_HEADER]: reason.slice(0, MAX_HEADER_ERROR),
      [FAILED_AT_HEADER]: new Date().toISOString(),
      [SOURCE_QUEUE_HEADER]: sub.queue,
    };
    return this.confirmed(
      (done) =>
        channel.sendToQueue(
          `${sub.queue}.dlq`,
          message.content,
          { ...this.copiedProperties(message), headers },
          done,
        ),
      `dead-lettering of a message on ${sub.queue}`,
    );
  }

  private originalRoutingKey(message: amqp.ConsumeMessage): string {
    const header: unknown = message.properties.headers?.[ROUTING_KEY_HEADER];
    return typeof header === 'string' ? header : message.fields.routingKey;
  }

  private copiedProperties(message: amqp.ConsumeMessage): amqp.Options.Publish {
    const p = message.properties;
    const props: amqp.Options.Publish = { persistent: true };
    if (typeof p.contentType === 'string') props.contentType = p.contentType;
    if (typeof p.messageId === 'string') props.messageId = p.messageId;
    if (typeof p.type === 'string') props.type = p.type;
    if (typeof p.correlationId === 'string') props.correlationId = p.correlationId;
    if (typeof p.appId === 'string') props.appId = p.appId;
    if (typeof p.timestamp === 'number') props.timestamp = p.timestamp;
    return props;
  }

  /** Sends with a confirm callback and waits for the confirm, at most confirmTimeoutMs. */
  private confirmed(send: (done: (error: unknown) => void) => void, what: string): Promise<void> {
    return withDeadline(
      new Promise<void>((resolve, reject) => {
        try {
          send((error) => {
            if (error)
              reject(error instanceof Error ? error : new Error(`${what} was not confirmed by the broker`));
            else resolve();
          });
        } catch (error) {
          // amqplib throws synchronously when the channel is already closed.
          reject(error);
        }
      }),
      this.confirmTimeoutMs,
      `confirm of ${what}`,
    );
  }

  /** Runs `run` after `ms` unless the transport closes first; then `cancelled`, if given, runs at once. */
  private later(ms: number, run: () => void, cancelled?: () => void): void {
    if (this.closing) {
      cancelled?.();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.cancellations.delete(timer);
      if (!this.closing) run();
      else cancelled?.();
    }, ms);
    this.timers.add(timer);
    if (cancelled) this.cancellations.set(timer, cancelled);
  }
}
