import type { Writable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import type { EntityManager } from 'typeorm';

/**
 * Bulk writes with `COPY ... FROM STDIN` (text format) on a transaction's connection: the rows
 * travel as bytes in a reused buffer, not as one statement parameter, so writing 100,000 rows costs
 * about what a raw COPY costs and no large string is built.
 */

/** A value as one field of COPY's text format (`\N` for null; arrays as array literals; objects as JSON). */
function copyField(value: unknown): string {
  if (typeof value === 'string') return escapeCopy(value);
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return escapeCopy(arrayLiteral(value));
  if (typeof value === 'object') return escapeCopy(JSON.stringify(value));
  return escapeCopy(String(value));
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIALS = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Most values have nothing to escape: a test costs far less than a replace with a callback. */
function escapeCopy(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c] ?? c) : text;
}

/** A Postgres array literal of text elements: every element quoted, `"` and `\` escaped. */
function arrayLiteral(list: readonly unknown[]): string {
  return `{${list.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
}

/**
 * COPY text of rows in memory that is kept and reused: rows waiting for the database are one
 * buffer, not thousands of objects and strings for the garbage collector to move around.
 */
export class CopyText {
  private buffer: Buffer;
  private used = 0;
  rows = 0;

  constructor(initialBytes = 256 * 1024) {
    this.buffer = Buffer.allocUnsafeSlow(initialBytes);
  }

  /**
   * Appends one row (column values in the statement's order). The row's line is written in one call
   * (a write per field cost more than the line string, which dies young).
   */
  add(values: readonly unknown[]): void {
    let line = copyField(values[0]);
    for (let i = 1; i < values.length; i++) line += `\t${copyField(values[i])}`;
    line += '\n';
    this.reserve(line.length * 3); // UTF-8 bytes of a JavaScript string, at most
    this.used += this.buffer.write(line, this.used, 'utf8');
    this.rows++;
  }

  private reserve(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.used + bytes));
    this.buffer.copy(grown, 0, 0, this.used);
    this.buffer = grown;
  }

  /** The text so far (a view: valid until the next `add` or `clear`). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  clear(): void {
    this.used = 0;
    this.rows = 0;
  }
}

interface PgCopyClient {
  query<T>(stream: T): T;
}

/**
 * A `COPY <table> (<columns>) FROM STDIN` left open on the connection of `manager`'s transaction and
 * fed batch after batch, so the database never waits between batches: a COPY per batch made it wait
 * twice a batch (for the end of one and the start of the next), each time until this process's event
 * loop came round. Nothing else can run on the connection until `end` (a statement would queue
 * behind the COPY); one `write` at a time.
 */
export class CopyFeed {
  private failure: { error: unknown } | undefined;
  /** Rejects with the COPY's error (a constraint the rows break, ...); resolves once it is stored. */
  private readonly settled: Promise<void>;

  private constructor(private readonly stream: Writable) {
    this.settled = new Promise<void>((resolve, reject) => {
      stream.once('finish', resolve);
      stream.once('error', (error) => {
        // pg-copy-streams then leaves the stream unusable (any write would throw): none is made.
        this.failure ??= { error };
        reject(error);
      });
    });
    this.settled.catch(() => {});
  }

  /** Opens the COPY on the connection of `manager`'s transaction; outside one it throws. */
  static async open(manager: EntityManager, statement: string): Promise<CopyFeed> {
    const runner = manager.queryRunner;
    if (!runner || runner.isReleased || !runner.isTransactionActive)
      throw new Error('CopyFeed needs a transaction (an EntityManager of dataSource.transaction)');
    const client = (await runner.connect()) as PgCopyClient;
    return new CopyFeed(client.query(copyFrom(statement)));
  }

  /**
   * Sends COPY text; resolves once the connection took it, not when the rows are stored. The bytes
   * are copied: pg-copy-streams calls back as soon as the socket is under its high-water mark, while
   * the socket may still hold the tail of a chunk, so the caller's buffer could not be reused safely.
   * Rejects with the COPY's error once there is one.
   */
  write(bytes: Uint8Array): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.error);
    const chunk = Buffer.from(bytes);
    const written = new Promise<void>((resolve, reject) => {
      this.stream.write(chunk, (error) => (error ? reject(error) : resolve()));
    });
    // A COPY that fails before it starts never calls back.
    return Promise.race([written, this.settled]);
  }

  /** Ends the COPY; resolves once every row is stored, else rejects with its error. */
  async end(): Promise<void> {
    if (this.failure) throw this.failure.error;
    this.stream.end();
    await this.settled;
  }
}
