// What happens to a delivery: the handler runs, then ack, retry queue or dead-letter queue.
import type * as amqp from 'amqplib';
import {
  ATTEMPT_HEADER,
  appHeaders,
  copiedProperties,
  FAILED_AT_HEADER,
  LAST_ERROR_HEADER,
  MAX_HEADER_ERROR,
  originalRoutingKey,
  ROUTING_KEY_HEADER,
  readAttempt,
  readDeliveryCount,
  SOURCE_QUEUE_HEADER,
} from './amqp-headers';
import { confirmed } from './amqp-publisher';
import type { Subscription } from './amqp-subscription';
import type { AmqpTimers } from './amqp-timers';
import type { BusObserver } from './bus';
import { decodeEnvelope } from './envelope';
import { type BusLogger, describeError, isPermanentFailure } from './logger';
import { runHandler } from './timeouts';

export interface DeliveryContext {
  logger: BusLogger;
  timers: AmqpTimers;
  /** How long a republish to the retry or dead-letter queue waits for the broker's confirm. */
  confirmTimeoutMs: number;
  isClosing(): boolean;
  /** The transport's observer (metrics), read at each delivery. */
  observer(): BusObserver | undefined;
}

/**
 * Failed messages are not requeued in place (that would spin and block the queue): they are
 * republished to `<queue>.retry`, whose expired messages are dead-lettered back to `<queue>`, with
 * the attempt number in a header; after `maxAttempts` they are moved to `<queue>.dlq`, with the error.
 * Deliveries that end with no verdict at all (the process dies in the handler, the channel drops) are
 * counted by a quorum queue itself: they add to the attempt number, and the queue's delivery limit
 * dead-letters a message that never gets a verdict (see workQueueArguments).
 */
export class AmqpDelivery {
  constructor(private readonly ctx: DeliveryContext) {}

  handle(sub: Subscription, channel: amqp.ConfirmChannel, message: amqp.ConsumeMessage): Promise<void> {
    return sub.broadcast
      ? this.handleBroadcast(sub, channel, message)
      : this.handleDelivery(sub, channel, message);
  }

  private async handleDelivery(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage,
  ): Promise<void> {
    // Our count of retries, plus the deliveries of this copy a quorum queue saw end without a verdict.
    const attempt = readAttempt(message.properties.headers) + readDeliveryCount(message.properties.headers);
    const decoded = decodeEnvelope(message.content);
    if (!decoded.ok) {
      this.ctx.logger.error({ queue: sub.queue, reason: decoded.reason }, 'malformed message; dead-lettered');
      this.ctx.observer()?.delivered(sub.queue, 'dead_lettered');
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
        this.ctx.observer()?.delivered(sub.queue, 'dead_lettered');
        this.ctx.logger.error(log, 'event handler failed for the last time; dead-lettered');
        await this.moveOn(sub, channel, message, () =>
          this.sendToDeadLetter(sub, channel, message, attempt, reason),
        );
      } else {
        this.ctx.observer()?.delivered(sub.queue, 'retried');
        this.ctx.logger.warn(log, 'event handler failed; will retry');
        await this.moveOn(sub, channel, message, () => this.sendToRetry(sub, channel, message, attempt));
      }
      return;
    }
    this.ctx.observer()?.delivered(sub.queue, 'consumed');
    this.settle(channel, message, 'ack');
  }

  /**
   * A delivery on a broadcast queue: no inbox and no retry or dead-letter queues (the queue is this
   * process's alone and dies with it). A failing handler is retried here, holding the message, up to
   * maxAttempts; then the message is dropped and logged. Ids already handled (or being handled) are skipped.
   */
  private async handleBroadcast(
    sub: Subscription,
    channel: amqp.ConfirmChannel,
    message: amqp.ConsumeMessage,
  ): Promise<void> {
    const decoded = decodeEnvelope(message.content);
    if (!decoded.ok) {
      this.ctx.logger.error(
        { queue: sub.queue, reason: decoded.reason },
        'malformed broadcast message; dropped',
      );
      this.settle(channel, message, 'ack');
      return;
    }
    const envelope = decoded.envelope;
    if (sub.seen?.has(envelope.id)) {
      this.settle(channel, message, 'ack');
      return;
    }
    // Marked before the handler runs: a copy delivered while it runs (prefetch > 1) is skipped too.
    sub.seen?.add(envelope.id);
    for (let attempt = 1; ; attempt++) {
      try {
        await runHandler(sub.handler, envelope, sub.handlerTimeoutMs);
        break;
      } catch (error) {
        const log = {
          queue: sub.queue,
          eventId: envelope.id,
          type: envelope.type,
          attempt,
          err: describeError(error),
        };
        if (attempt >= sub.maxAttempts || isPermanentFailure(error) || this.ctx.isClosing()) {
          this.ctx.logger.error(log, 'broadcast handler failed for the last time; message dropped');
          break;
        }
        this.ctx.logger.warn(log, 'broadcast handler failed; will retry');
        await new Promise<void>((resolve) => this.ctx.timers.later(sub.retryDelayMs, resolve, resolve));
        if (this.ctx.isClosing()) break;
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
      this.ctx.logger.error(
        { queue: sub.queue, err: describeError(error) },
        'could not move failed message; requeueing',
      );
      this.ctx.timers.later(sub.retryDelayMs, () => this.settle(channel, message, 'requeue'));
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
      this.ctx.logger.debug({ err: describeError(error) }, `could not ${how} message on a closed channel`);
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
      [ROUTING_KEY_HEADER]: originalRoutingKey(message),
    };
    return confirmed(
      (done) =>
        channel.sendToQueue(
          `${sub.queue}.retry`,
          message.content,
          { ...copiedProperties(message), headers, expiration: String(sub.retryDelayMs) },
          done,
        ),
      `retry of a message on ${sub.queue}`,
      this.ctx.confirmTimeoutMs,
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
      [ROUTING_KEY_HEADER]: originalRoutingKey(message),
      [LAST_ERROR_HEADER]: reason.slice(0, MAX_HEADER_ERROR),
      [FAILED_AT_HEADER]: new Date().toISOString(),
      [SOURCE_QUEUE_HEADER]: sub.queue,
    };
    return confirmed(
      (done) =>
        channel.sendToQueue(
          `${sub.queue}.dlq`,
          message.content,
          { ...copiedProperties(message), headers },
          done,
        ),
      `dead-lettering of a message on ${sub.queue}`,
      this.ctx.confirmTimeoutMs,
    );
  }
}
