// The broker connection: amqplib's recovering connection, its logging, and closing steps.
import * as amqp from 'amqplib';
import { type BusLogger, describeError } from './logger';
import { withDeadline } from './timeouts';

export const CLOSE_STEP_TIMEOUT_MS = 5000;

/** Runs an amqplib call that may throw synchronously (closed channel) or reject; never throws. */
export async function quietly(what: () => Promise<unknown>, ms: number): Promise<void> {
  try {
    await withDeadline(Promise.resolve().then(what), ms, 'amqp call');
  } catch {
    // Closing is best effort: the connection close that follows releases everything anyway.
  }
}

export function withHeartbeat(url: string, seconds: number): string {
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
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'amqp://<unparsable>';
  }
}

export interface RecoveringConnectionOptions {
  url: string;
  serviceName: string;
  reconnectInitialDelayMs: number;
  reconnectMaxDelayMs: number;
  /** Runs on every new connection, before amqplib reports it connected; a throw makes it retry. */
  setup: (model: amqp.ChannelModel) => Promise<void>;
}

/** A connection that reconnects with exponential back-off until it is closed. */
export function openRecoveringConnection(
  options: RecoveringConnectionOptions,
): Promise<amqp.RecoveringChannelModel> {
  return amqp.connect(options.url, {
    clientProperties: { connection_name: options.serviceName },
    // Without it Nagle holds a publish's header and body frames until the broker's delayed ACK
    // (~40 ms on Linux) on every event.
    noDelay: true,
    // Bounds each connect attempt, so a black-holed broker address cannot stall recovery.
    timeout: 10_000,
    recovery: {
      initialDelay: options.reconnectInitialDelayMs,
      maxDelay: options.reconnectMaxDelayMs,
      factor: 2,
      jitter: 0.2,
      waitForConnect: false,
      setup: options.setup,
    },
  });
}

/** Logs the recovering connection's life; `state` remembers whether it ever connected. */
export function watchRecovery(
  recovering: amqp.RecoveringChannelModel,
  logger: BusLogger,
  url: string,
  state: { everConnected: boolean },
): void {
  recovering.on('connect', () => {
    logger.info(
      { url: redact(url), reconnect: state.everConnected },
      state.everConnected ? 'amqp reconnected' : 'amqp connected',
    );
    state.everConnected = true;
  });
  recovering.on('disconnect', (error: Error) => {
    logger.warn({ err: describeError(error) }, 'amqp connection lost');
  });
  recovering.on('connect-failed', (error: Error) => {
    logger.debug({ err: describeError(error) }, 'amqp connect attempt failed');
  });
  recovering.on('reconnect-scheduled', (info: { attempt: number; delay: number; error: Error }) => {
    logger.info(
      { attempt: info.attempt, delayMs: info.delay, err: describeError(info.error) },
      'amqp reconnect scheduled',
    );
  });
  recovering.on('reconnect-failed', (error: Error) => {
    logger.error({ err: describeError(error) }, 'amqp recovery gave up');
  });
  recovering.on('blocked', (reason: string) => logger.warn({ reason }, 'amqp connection blocked by broker'));
  recovering.on('unblocked', () => logger.info({}, 'amqp connection unblocked'));
  // Without a listener an 'error' event would crash the process; the close that follows drives recovery.
  recovering.on('error', (error: Error) =>
    logger.warn({ err: describeError(error) }, 'amqp connection error'),
  );
}
