import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { EntityManager } from 'typeorm';

/**
 * Bulk writes with `COPY ... FROM STDIN` (text format) on a transaction's connection: the rows
 * travel as small chunks of text, not as one statement parameter, so writing 100,000 rows costs
 * about what a raw COPY costs and no large string is built.
 */

/** A value as one field of COPY's text format (`\N` for null; arrays as array literals; objects as JSON). */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return escapeCopy(arrayLiteral(value));
  if (typeof value === 'object') return escapeCopy(JSON.stringify(value));
  return escapeCopy(String(value));
}

/** One line of COPY text for these column values (in the statement's column order). */
export function copyLine(values: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i === 0 ? '' : '\t') + copyField(values[i]);
  return `${line}\n`;
}

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escapeCopy(text: string): string {
  return text.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] ?? c);
}

/** A Postgres array literal of text elements: every element quoted, `"` and `\` escaped. */
function arrayLiteral(list: readonly unknown[]): string {
  return `{${list.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
}

interface PgCopyClient {
  query<T>(stream: T): T;
}

/**
 * Runs `COPY <table> (<columns>) FROM STDIN` with `lines` (from {@link copyLine}) on the connection
 * of `manager`'s transaction. Outside a transaction it throws: COPY is for writes that belong together.
 */
export async function copyRows(
  manager: EntityManager,
  statement: string,
  lines: Iterable<string>,
): Promise<void> {
  const runner = manager.queryRunner;
  if (!runner || runner.isReleased || !runner.isTransactionActive)
    throw new Error('copyRows needs a transaction (an EntityManager of dataSource.transaction)');
  const client = (await runner.connect()) as PgCopyClient;
  await pipeline(chunks(lines), client.query(copyFrom(statement)));
}

/** Lines joined into chunks of about 64 KB: fewer writes than one per line, no large string. */
function* chunks(lines: Iterable<string>): Generator<string> {
  let chunk = '';
  for (const line of lines) {
    chunk += line;
    if (chunk.length >= 65_536) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}
