/** The subset of pino the bus logs through, so tests can pass a silent one. */
export interface BusLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

const noop = (): void => {};

export const silentLogger: BusLogger = { info: noop, warn: noop, error: noop, debug: noop };

/** Error text for logs and headers; never throws on odd values. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  try {
    return typeof error === 'string' ? error : JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/**
 * A handler error that says retrying cannot help (`retryable === false`, as on AppError and the
 * notifier's DeliveryError): the message is dead-lettered at once instead of after every attempt.
 */
export function isPermanentFailure(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === false
  );
}
