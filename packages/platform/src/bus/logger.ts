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
