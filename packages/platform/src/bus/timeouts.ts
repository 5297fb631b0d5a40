/** Raised when a bus operation (a batch, a publish, a handler) did not finish in its time. */
export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} timed out after ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Settles like `promise`, or rejects with a TimeoutError after `ms`. The promise itself is not
 * cancelled; the caller decides what to do with work that may still finish later.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Runs a consumer's handler so that whatever it does becomes a settled promise within `timeoutMs`:
 * a synchronous throw and a non-promise return are folded in, and a handler that never answers
 * rejects with a TimeoutError (it keeps running; its transaction stays open until it ends, and the
 * inbox row it would commit makes a later redelivery a no-op).
 */
export function runHandler<T>(
  handler: (value: T) => Promise<void>,
  value: T,
  timeoutMs: number,
): Promise<void> {
  let running: Promise<void>;
  try {
    running = Promise.resolve(handler(value));
  } catch (error) {
    return Promise.reject(error);
  }
  // A late rejection of a handler given up on must not become an unhandled rejection.
  running.catch(() => {});
  return withDeadline(running, timeoutMs, 'event handler');
}
