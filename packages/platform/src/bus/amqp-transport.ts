import type { EventEnvelope } from '@hwp/contracts';
import type * as amqp from 'amqplib';
import { CLOSE_STEP_TIMEOUT_MS, quietly, redact, watchRecovery, withHeartbeat } from './amqp-connection';
import { AmqpConsumers } from './amqp-consumers';
import { FailoverConnection } from './amqp-failover';
import type { AmqpTransportOptions } from './amqp-options';
import { publishEnvelope } from './amqp-publisher';
import type { Handler, Subscription } from './amqp-subscription';
import { AmqpTimers } from './amqp-timers';
import { consumerQueueNameOf, exchangeNameOf } from './amqp-topology';
import {
  type BusObserver,
  DEFAULT_HANDLER_TIMEOUT_MS,
  type MessageTransport,
  newReplicaId,
  RecentIds,
  type SubscribeOptions,
} from './bus';
import { type BusLogger, describeError, guardLogger, silentLogger } from './logger';
import { withDeadline } from './timeouts';

export {
  ATTEMPT_HEADER,
  FAILED_AT_HEADER,
  LAST_ERROR_HEADER,
  ROUTING_KEY_HEADER,
  SOURCE_QUEUE_HEADER,
} from './amqp-headers';
export type { AmqpTransportOptions } from './amqp-options';

/**
 * RabbitMQ transport on the durable topic exchange `hwp.events`.
 *
 * The connection (FailoverConnection) takes one broker address or those of a cluster's nodes: it
 * connects to the first that answers, and when the connection drops it moves to another node (or
 * waits for the only one) with exponential back-off; each new connection re-declares the exchange,
 * re-creates the publish channel and every subscription. While disconnected publish() waits up to
 * `publishWaitMs` for a connection (default: not at all), then rejects, so the outbox relay keeps the
 * rows and retries.
 *
 * Failed messages are not requeued in place (that would spin and block the queue): they are
 * republished to `<queue>.retry`, whose expired messages are dead-lettered back to `<queue>`, with
 * the attempt number in a header; after `maxAttempts` they are moved to `<queue>.dlq`.
 */
export class AmqpTransport implements MessageTransport {
  readonly kind = 'amqp' as const;
  readonly serviceName: string;
  observer?: BusObserver;
  /** This process among the service's replicas; broadcast queues are named after it. */
  readonly replicaId: string;

  private readonly urls: readonly string[];
  private readonly logger: BusLogger;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly prefetch: number;
  private readonly handlerTimeoutMs: number;
  private readonly confirmTimeoutMs: number;
  private readonly reconnectInitialDelayMs: number;
  private readonly reconnectMaxDelayMs: number;
  private readonly startTimeoutMs: number;
  private readonly publishWaitMs: number;
  private readonly namespace: string;
  private readonly exchange: string;

  private connection: FailoverConnection | null = null;
  private model: amqp.ChannelModel | null = null;
  private publishChannel: amqp.ConfirmChannel | null = null;
  private readonly timers = new AmqpTimers(() => this.closing);
  private readonly consumers: AmqpConsumers;
  private connectedWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private readonly connectionState = { everConnected: false };
  private closing = false;

  constructor(options: AmqpTransportOptions) {
    this.serviceName = options.serviceName;
    this.replicaId = options.replicaId ?? newReplicaId();
    const urls = typeof options.url === 'string' ? [options.url] : [...options.url];
    if (urls.length === 0) throw new Error('amqp transport needs at least one broker URL');
    this.urls = urls.map((url) => withHeartbeat(url, options.heartbeatSeconds ?? 10));
    this.logger = guardLogger(options.logger ?? silentLogger);
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.retryDelayMs = Math.max(0, options.retryDelayMs ?? 1000);
    this.prefetch = Math.max(1, options.prefetch ?? 10);
    this.handlerTimeoutMs = Math.max(1, options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS);
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 5000;
    this.reconnectInitialDelayMs = options.reconnectInitialDelayMs ?? 250;
    this.reconnectMaxDelayMs = options.reconnectMaxDelayMs ?? 10_000;
    this.startTimeoutMs = options.startTimeoutMs ?? 5000;
    this.publishWaitMs = Math.max(0, options.publishWaitMs ?? 0);
    this.namespace = options.namespace ?? '';
    this.exchange = exchangeNameOf(this.namespace);
    this.consumers = new AmqpConsumers({
      logger: this.logger,
      timers: this.timers,
      exchange: this.exchange,
      queues: { type: options.queueType ?? 'quorum', expiresMs: options.queueExpiresMs },
      confirmTimeoutMs: this.confirmTimeoutMs,
      isClosing: () => this.closing,
      observer: () => this.observer,
      currentModel: () => this.model,
    });
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
        { urls: this.urls.map(redact), waitedMs: this.startTimeoutMs },
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
    if (!this.connection) {
      this.connection = new FailoverConnection({
        urls: this.urls,
        serviceName: this.serviceName,
        reconnectInitialDelayMs: this.reconnectInitialDelayMs,
        reconnectMaxDelayMs: this.reconnectMaxDelayMs,
        setup: (model: amqp.ChannelModel) => this.setupConnection(model),
      });
      watchRecovery(this.connection, this.logger, this.connectionState);
    }
    if (options.waitForConnection !== false) await this.connection.waitForConnect();
  }

  /** The (password-free) address of the broker node this transport is connected to, or null. */
  connectedBroker(): string | null {
    const url = this.isConnected() ? this.connection?.connectedUrl : null;
    return url ? redact(url) : null;
  }

  /** Resolves once connected (publish channel ready); rejects after `timeoutMs`. */
  waitUntilConnected(timeoutMs: number): Promise<void> {
    if (this.isConnected()) return Promise.resolve();
    if (this.closing) return Promise.reject(new Error('amqp transport is closed'));
    let waiter: { resolve: () => void; reject: (error: Error) => void } | undefined;
    const connected = new Promise<void>((resolve, reject) => {
      waiter = { resolve, reject };
      this.connectedWaiters.push(waiter);
    });
    return withDeadline(connected, timeoutMs, 'waiting for the broker').finally(() => {
      // A waiter that timed out must not stay behind until the next connection (publishes add one each).
      this.connectedWaiters = this.connectedWaiters.filter((w) => w !== waiter);
    });
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
    return this.consumers.stalled(olderThanMs);
  }

  /** The dead-letter queue of a consumer queue named `<serviceName>.<consumer>` (namespace added). */
  deadLetterQueueOf(queue: string): string {
    return `${this.namespace}${queue}.dlq`;
  }

  /** Dead-letter queues of this transport's subscriptions. */
  deadLetterQueueNames(): string[] {
    return this.consumers.deadLetterQueueNames();
  }

  /**
   * Messages waiting in each dead-letter queue of this service's consumers (passively checked, on a
   * channel of its own); empty while disconnected.
   */
  async deadLetterDepths(): Promise<{ queue: string; messages: number }[]> {
    const model = this.model;
    if (!model || !this.isConnected()) return [];
    const depths: { queue: string; messages: number }[] = [];
    for (const queue of this.deadLetterQueueNames()) {
      // A queue that does not exist (yet) closes the channel it was checked on: one channel each.
      const channel = await model.createChannel();
      channel.on('error', () => undefined);
      try {
        const { messageCount } = await withDeadline(
          channel.checkQueue(queue),
          this.confirmTimeoutMs,
          `depth of ${queue}`,
        );
        depths.push({ queue, messages: messageCount });
      } catch {
        // Not declared yet, or the broker went away meanwhile: nothing to report for it.
      } finally {
        await channel.close().catch(() => undefined);
      }
    }
    return depths;
  }

  /**
   * Publishes with a broker confirm. While disconnected (a node of the cluster went, the connection is
   * moving to another) it first waits up to `publishWaitMs` for the connection to come back; after
   * that it rejects, and the outbox keeps the event for the relay's next try.
   */
  async publish(envelope: EventEnvelope): Promise<void> {
    if (!this.isConnected() && this.publishWaitMs > 0 && !this.closing)
      await this.waitUntilConnected(this.publishWaitMs).catch(() => undefined);
    const channel = this.publishChannel;
    if (!this.isConnected() || !channel) throw new Error('amqp transport is not connected');
    await publishEnvelope(channel, this.exchange, this.serviceName, envelope, this.confirmTimeoutMs);
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
    const queue = consumerQueueNameOf(this.namespace, this.serviceName, options, this.replicaId);
    if (this.consumers.subscriptions.some((s) => s.queue === queue)) {
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
    this.consumers.subscriptions.push(subscription);
    const model = this.model;
    if (!model) {
      this.logger.info({ queue }, 'amqp not connected; consumer starts once it is');
      return;
    }
    try {
      await this.consumers.attach(subscription, model);
    } catch (error) {
      if (this.model === model) {
        // The broker refused the topology itself: report it rather than retrying forever.
        this.consumers.subscriptions.splice(this.consumers.subscriptions.indexOf(subscription), 1);
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
    this.timers.clear();
    for (const waiter of this.connectedWaiters.splice(0))
      waiter.reject(new Error('amqp transport is closed'));
    await this.consumers.stop();
    const publishChannel = this.publishChannel;
    this.publishChannel = null;
    if (publishChannel) await quietly(() => publishChannel.close(), CLOSE_STEP_TIMEOUT_MS);
    const connection = this.connection;
    if (connection) await quietly(() => connection.close(), CLOSE_STEP_TIMEOUT_MS);
    this.model = null;
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
    this.consumers.attachAll();
  }

  private onConnectionClosed(model: amqp.ChannelModel): void {
    if (this.model !== model) return;
    this.model = null;
    this.publishChannel = null;
    this.consumers.detachFrom(model);
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
}
