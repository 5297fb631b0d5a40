/** Socket errors of a database connection (connecting, or the connection failing), as pg hands them on. */
const fromConnection = new WeakSet<object>();

/** Marks `error` as one of a database connection's socket (see CallbackQueryClient). */
export function markConnectionError(error: unknown): void {
  if (typeof error === 'object' && error !== null) fromConnection.add(error);
}

/**
 * SQLSTATEs that say the server cannot serve right now: class 08 (connection exception), 57P01
 * admin_shutdown (a fast or smart shutdown ends the sessions), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up, shutting down, in recovery), 53300 too_many_connections.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * What pg and pg-pool say, without a code, when a connection breaks or none can be had: the server
 * closed the socket (an immediate shutdown, a crash), a client whose connection failed is used again,
 * the pool's wait for a connection (connectionTimeoutMillis) ran out.
 */
const MESSAGES =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect)$/;

/**
 * TypeORM 1.x releases a query runner itself when its connection fails between statements (a
 * session ended by a shutdown while its transaction does other work): the transaction's next
 * statement then fails with one of these, not with the connection's error. Using a released runner
 * is otherwise a bug, which this would misreport as unavailability; inside `transaction()` callbacks
 * the application never releases the runner itself.
 */
const RELEASED_RUNNER = new Set([
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
]);

/**
 * Whether `error` (pg's, pg-pool's, or TypeORM's QueryFailedError around one) means the database is
 * out of reach right now (down, restarting, out of connections, or the connection broke) rather than
 * a bug or bad input: the request may be retried as it is.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const driverError = (error as { driverError?: unknown }).driverError;
  if (driverError !== undefined && driverError !== error && isDatabaseUnavailable(driverError)) return true;
  if (fromConnection.has(error)) return true;
  if (error instanceof Error && RELEASED_RUNNER.has(error.name)) return true;
  const { code, message, severity } = error as { code?: unknown; message?: unknown; severity?: unknown };
  // A SQLSTATE comes with a severity (pg's DatabaseError); a bare `08...` could be anything's.
  if (typeof code === 'string' && typeof severity === 'string') {
    if (SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  return typeof message === 'string' && MESSAGES.test(message);
}
