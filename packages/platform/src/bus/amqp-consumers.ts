// The transport's consumers: setting each up on the current connection, again after every loss.
import type * as amqp from 'amqplib';
import { CLOSE_STEP_TIMEOUT_MS, quietly } from './amqp-connection';
import { AmqpDelivery } from './amqp-delivery';
import { markDetached, type Subscription, stalledSubscriptions } from './amqp-subscription';
import type { AmqpTimers } from './amqp-timers';
import { declareConsumerTopology, QueueMismatchError, type QueueType } from './amqp-topology';
import type { BusObserver } from './bus';
import { type BusLogger, describeError } from './logger';
import { withDeadline } from './timeouts';

const REATTACH_DELAY_MS = 1000;
/** A queue declared with other arguments stays so until an operator acts: no need to ask every second. */
const MISMATCH_RETRY_DELAY_MS = 30_000;

/** What the consumers need from their transport. */
export interface ConsumerHost {
  logger: BusLogger;
  timers: AmqpTimers;
  exchange: string;
  /** What work queues are declared as; the delivery limit comes from each subscription. */
  queues: { type: QueueType; expiresMs?: number };
  confirmTimeoutMs: number;
  isClosing(): boolean;
  observer(): BusObserver | undefined;
  /** The connection consumers should run on, or null while disconnected. */
  currentModel(): amqp.ChannelModel | null;
}

export class AmqpConsumers {
  readonly subscriptions: Subscription[] = [];
  private readonly delivery: AmqpDelivery;

  constructor(private readonly host: ConsumerHost) {
    this.delivery = new AmqpDelivery(host);
  }

  /** See AmqpTransport.stalledConsumers(). */
  stalled(olderThanMs: number): string[] {
    return stalledSubscriptions(this.subscriptions, olderThanMs);
  }

  deadLetterQueueNames(): string[] {
    return this.subscriptions.filter((sub) => !sub.broadcast).map((sub) => `${sub.queue}.dlq`);
  }

  /** Sets every subscription up on the (new) current connection. */
  attachAll(): void {
    for (const sub of this.subscriptions) void this.ensureAttached(sub);
  }

  /** The connection went away: its consumers went with it. */
  detachFrom(model: amqp.ChannelModel): void {
    for (const sub of this.subscriptions) {
      if (sub.model === model) markDetached(sub);
    }
  }

  /** Cancels consumers, lets running handlers finish, closes the channels. Never throws. */
  async stop(): Promise<void> {
    for (const sub of this.subscriptions) {
      if (sub.channel && sub.consumerTag) {
        const { channel, consumerTag } = sub;
        await quietly(() => channel.cancel(consumerTag), CLOSE_STEP_TIMEOUT_MS);
      }
    }
    const running = this.subscriptions.flatMap((sub) => [...sub.inFlight.keys()]);
    if (running.length > 0) {
      await withDeadline(Promise.allSettled(running), CLOSE_STEP_TIMEOUT_MS, 'handlers').catch(() => {
        this.host.logger.warn(
          { running: running.length },
          'closing amqp transport with handlers still running',
        );
      });
    }
    for (const sub of this.subscriptions) {
      const channel = sub.channel;
      sub.channel = null;
      if (channel) await quietly(() => channel.close(), CLOSE_STEP_TIMEOUT_MS);
    }
  }

  /** Sets a subscription up on the current connection, retrying later when that fails. */
  async ensureAttached(sub: Subscription): Promise<void> {
    const model = this.host.currentModel();
    if (this.host.isClosing() || !model || sub.model === model || !this.subscriptions.includes(sub)) return;
    try {
      await this.attach(sub, model);
    } catch (error) {
      if (this.host.isClosing() || this.host.currentModel() !== model) return;
      this.host.logger.error(
        { queue: sub.queue, err: describeError(error) },
        'amqp consumer setup failed; retrying',
      );
      const delay = error instanceof QueueMismatchError ? MISMATCH_RETRY_DELAY_MS : REATTACH_DELAY_MS;
      this.host.timers.later(delay, () => void this.ensureAttached(sub));
    }
  }

  async attach(sub: Subscription, model: amqp.ChannelModel): Promise<void> {
    if (sub.model === model) return;
    sub.model = model;
    let channel: amqp.ConfirmChannel | null = null;
    try {
      channel = await model.createConfirmChannel();
      const ch = channel;
      ch.on('error', (error: Error) =>
        this.host.logger.warn({ queue: sub.queue, err: describeError(error) }, 'amqp consumer channel error'),
      );
      ch.once('close', () => this.onConsumerChannelClosed(sub, model, ch));
      await declareConsumerTopology(
        ch,
        sub,
        this.host.exchange,
        {
          ...this.host.queues,
          maxAttempts: sub.maxAttempts,
        },
        () => model.createChannel(),
      );
      await ch.prefetch(sub.prefetch);
      sub.channel = ch;
      const { consumerTag } = await ch.consume(sub.queue, (message) => this.onDelivery(sub, ch, message), {
        noAck: false,
      });
      sub.consumerTag = consumerTag;
      sub.detachedSince = null;
      this.host.logger.info({ queue: sub.queue, patterns: sub.patterns }, 'amqp consumer started');
    } catch (error) {
      if (sub.model === model) markDetached(sub);
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
    // A channel that never became the consumer's (its setup failed): attach() reports that failure and
    // ensureAttached() schedules the next try, at the pace the failure calls for.
    if (sub.channel === null && sub.model === model) return;
    if (sub.channel === channel) markDetached(sub);
    if (this.host.isClosing()) return;
    // When the whole connection went, setupConnection() resubscribes; otherwise only this channel failed.
    this.host.timers.later(REATTACH_DELAY_MS, () => void this.ensureAttached(sub));
  }

  private onDelivery(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage | null,
  ): void {
    if (message === null) {
      // The broker cancelled the consumer, e.g. because the queue was deleted.
      this.host.logger.warn({ queue: sub.queue }, 'amqp consumer cancelled by the broker; resubscribing');
      if (sub.channel === channel) {
        markDetached(sub);
        void quietly(() => channel.close(), CLOSE_STEP_TIMEOUT_MS);
      }
      if (!this.host.isClosing())
        this.host.timers.later(REATTACH_DELAY_MS, () => void this.ensureAttached(sub));
      return;
    }
    const run = this.delivery.handle(sub, channel, message).catch((error: unknown) => {
      this.host.logger.error(
        { queue: sub.queue, err: describeError(error) },
        'amqp delivery handling failed',
      );
    });
    sub.inFlight.set(run, Date.now());
    void run.finally(() => sub.inFlight.delete(run));
  }
}
