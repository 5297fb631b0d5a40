import { Client, type CustomTypesConfig, types } from 'pg';
import parseDate from 'postgres-date';
import { markConnectionError } from './unavailable';

type QueryCallback = (error: Error | null, result: unknown) => void;
type QueryMethod = (this: Client, config: unknown, values?: unknown, callback?: unknown) => unknown;

const callbackForm = Client.prototype.query as unknown as QueryMethod;

/**
 * pg's Client whose promise form of `query` (the form TypeORM uses) runs through pg's callback form.
 *
 * pg's own promise form constructs the query object first and assigns its callback afterwards, from
 * the promise's executor. On Node 20 (V8 11.3) every result of that form (rows, strings, dates)
 * survives the young-generation collections, long after its query ended, and is promoted to the old
 * generation, where only a full collection frees it. In the parts-search bench that was ~1.9 MB
 * promoted per scavenge (5-8 ms pauses, ~2 MB of old-generation growth each time); through the
 * callback form, which gives the callback to the query's constructor, ~6 KB and 1-3 ms. The same
 * pattern reproduces with plain objects, without pg. Results and errors are pg's own.
 *
 * Its socket's errors (a refused or reset connection, a connect timeout) are marked as the
 * database's before pg hands them on, so a request failing on one answers 503 naming the database
 * (isDatabaseUnavailable) rather than some backing service.
 */
export class CallbackQueryClient extends Client {
  constructor(config?: ConstructorParameters<typeof Client>[0]) {
    super(config);
    // Registered before pg's own listener (attached on connect), so the mark is there when it runs.
    this.connection.on('error', markConnectionError);
  }
}

/**
 * pg's callback form as it is for what it handles itself: a callback (as an argument or in the config),
 * a submittable (cursor, stream, COPY), and a missing query (which pg refuses by throwing at once).
 */
function callbackFormFits(config: unknown, values: unknown, callback: unknown): boolean {
  if (callback !== undefined || typeof values === 'function' || config === null || config === undefined)
    return true;
  const fields = config as { submit?: unknown; callback?: unknown };
  return typeof fields.submit === 'function' || typeof fields.callback === 'function';
}

function query(this: Client, config: unknown, values?: unknown, callback?: unknown): unknown {
  if (callbackFormFits(config, values, callback)) return callbackForm.call(this, config, values, callback);
  // pg's promise class (its `Promise` option), as its own promise form uses.
  const PromiseClass = (this as unknown as { _Promise?: PromiseConstructor })._Promise ?? Promise;
  return new PromiseClass((resolve, reject) => {
    const done: QueryCallback = (error, result) => (error ? reject(error) : resolve(result));
    callbackForm.call(this, config, values, done);
  }).catch((error: Error) => {
    // As pg's promise form: a stack that leads back to the caller rather than to the socket's read.
    Error.captureStackTrace(error);
    throw error;
  });
}

Object.defineProperty(CallbackQueryClient.prototype, 'query', {
  value: query,
  writable: true,
  configurable: true,
});

const TIMESTAMPTZ = 1184;
const TIMESTAMP = 1114;

/**
 * pg's type parsers, with `timestamptz` and `timestamp` read by postgres-date 2 (a character scanner,
 * about twice as fast as the regular expression of the 1.x that pg-types 2 bundles; same dates,
 * `Infinity` for 'infinity'). A page of parts has two per row.
 */
export const pgTypes: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (oid === TIMESTAMPTZ || oid === TIMESTAMP) && format !== 'binary'
      ? parseDate
      : types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};
