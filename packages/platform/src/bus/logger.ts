/** The subset of pino the bus logs through, so tests can pass a silent one. */
export interface BusLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

const noop = (): void => {};

export const silentLogger: BusLogger = { info: noop, warn: noop, error: noop, debug: noop };

/**
 * `logger` with every method made unable to throw: the bus logs from its loops and delivery paths,
 * and a logger that fails (a broken destination, a serializer that throws on an odd error) must not
 * end a loop or turn into an unhandled rejection.
 */
export function guardLogger(logger: BusLogger): BusLogger {
  const guard =
    (level: keyof BusLogger) =>
    (obj: object, msg?: string): void => {
      try {
        logger[level](obj, msg);
      } catch {
        // Nowhere left to report it; the message path matters more than this log line.
      }
    };
  return { info: guard('info'), warn: guard('warn'), error: guard('error'), debug: guard('debug') };
}

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
