// The broker connection's logging, addresses and closing steps.
import type { FailoverConnection, ReconnectScheduled } from './amqp-failover';
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

/** Logs the connection's life; `state` remembers whether it ever connected. */
export function watchRecovery(
  connection: FailoverConnection,
  logger: BusLogger,
  state: { everConnected: boolean },
): void {
  connection.on('connect', (_model: unknown, url: string) => {
    logger.info(
      { url: redact(url), reconnect: state.everConnected },
      state.everConnected ? 'amqp reconnected' : 'amqp connected',
    );
    state.everConnected = true;
  });
  connection.on('disconnect', (error: Error) => {
    logger.warn({ err: describeError(error) }, 'amqp connection lost');
  });
  connection.on('connect-failed', (error: Error, url: string) => {
    logger.debug({ url: redact(url), err: describeError(error) }, 'amqp connect attempt failed');
  });
  connection.on('reconnect-scheduled', (info: ReconnectScheduled) => {
    logger.info(
      { attempt: info.attempt, delayMs: info.delay, err: describeError(info.error) },
      'amqp reconnect scheduled',
    );
  });
  connection.on('blocked', (reason: string) => logger.warn({ reason }, 'amqp connection blocked by broker'));
  connection.on('unblocked', () => logger.info({}, 'amqp connection unblocked'));
  // Without a listener an 'error' event would crash the process; the close that follows drives recovery.
  connection.on('error', (error: Error) =>
    logger.warn({ err: describeError(error) }, 'amqp connection error'),
  );
}
