import { createHash } from 'node:crypto';
import type { BomAlternate, CurrencyAmount } from '@hwp/contracts';
import { drainedOrClosed } from '@hwp/platform';
import type { Response } from 'express';
import type { LineFacts, Occurrence, TreeWalk } from './bom-walk';
import { sheetWriter } from './xlsx-writer';

export type Cell = string | number | null;
export interface ExportRow {
  level: number;
  cells: Cell[];
}
export interface ExportTable {
  header: string[];
  rows: ExportRow[];
}

/** The hierarchical export's columns (`export.csv` and `export.xlsx`). */
export const HIERARCHICAL_COLUMNS = [
  'level',
  'item_number',
  'part_number',
  'name',
  'qty',
  'extended_qty',
  'uom',
  'refdes',
  'notes',
  'sort_index',
  'assembly',
  'bom_revision',
  'unit_cost',
  'currency',
  'extended_cost',
  'extended_cost_currency',
  'alternates',
  'date_from',
  'date_to',
  'serial_from',
  'serial_to',
  'lot_from',
  'lot_to',
  'attributes',
  'warnings',
] as const;

/**
 * Units of measure of `export.erp.csv`, as codes ERP systems take (UN/ECE Recommendation 20 where
 * it has a short code). A unit not listed goes out upper-cased as written.
 */
export const ERP_UNIT_CODES: Record<string, string> = {
  each: 'EA',
  ea: 'EA',
  pc: 'EA',
  pcs: 'EA',
  piece: 'EA',
  pieces: 'EA',
  unit: 'EA',
  units: 'EA',
  m: 'MTR',
  meter: 'MTR',
  metre: 'MTR',
  meters: 'MTR',
  mm: 'MMT',
  cm: 'CMT',
  km: 'KMT',
  m2: 'MTK',
  sqm: 'MTK',
  m3: 'MTQ',
  kg: 'KGM',
  g: 'GRM',
  gram: 'GRM',
  mg: 'MGM',
  lb: 'LBR',
  lbs: 'LBR',
  oz: 'ONZ',
  l: 'LTR',
  liter: 'LTR',
  litre: 'LTR',
  ml: 'MLT',
  ft: 'FOT',
  foot: 'FOT',
  feet: 'FOT',
  in: 'INH',
  inch: 'INH',
  inches: 'INH',
  set: 'SET',
  pair: 'PR',
  pr: 'PR',
  roll: 'RO',
  box: 'BX',
  pack: 'PK',
  pk: 'PK',
  kit: 'KT',
};

export function erpUnit(uom: string): string {
  return ERP_UNIT_CODES[uom.trim().toLowerCase()] ?? uom.trim().toUpperCase();
}

/**
 * Text that a spreadsheet program would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a
 * leading apostrophe (the OWASP CSV-injection rule); the import takes it off again.
 */
export function neutralise(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** What the import reads back: the apostrophe of `neutralise` removed. */
export function unneutralise(value: string): string {
  return /^'[=+\-@\t\r]/.test(value) ? value.slice(1) : value;
}

const text = (value: string | null | undefined): Cell => (value ? neutralise(value) : null);

/**
 * `extended_cost` and `extended_cost_currency`: a number and its currency, so a spreadsheet sums the
 * column. A line whose cost rolls up in several currencies has no single number: its cell stays empty
 * and the currency cell lists the amounts (`1.8 USD; 2 EUR`).
 */
function extendedCostCells(amounts: CurrencyAmount[]): [Cell, Cell] {
  if (amounts.length === 0) return [null, null];
  if (amounts.length === 1) return [amounts[0].amount, amounts[0].currency];
  return [null, amounts.map((a) => (a.currency ? `${a.amount} ${a.currency}` : String(a.amount))).join('; ')];
}

export function alternatesText(alternates: BomAlternate[]): Cell {
  if (alternates.length === 0) return null;
  return neutralise(alternates.map((a) => `${a.partNumber} (${a.approval})`).join(', '));
}

/** An export: its column names and its rows, produced one at a time as the tree is walked. */
export interface ExportRows {
  header: string[];
  rows: Iterable<ExportRow>;
}

/**
 * Rows from a walk of the tree: `fixed` gives a line's cells that are the same in every occurrence
 * (computed once per line and kept), `row` puts them together with the occurrence's own.
 */
function* rowsOf(
  walk: TreeWalk,
  fixed: (facts: LineFacts) => Cell[],
  row: (occurrence: Occurrence, cells: Cell[]) => Cell[],
): Generator<ExportRow> {
  const cache = new Map<LineFacts, Cell[]>();
  for (const occurrence of walk.occurrences()) {
    let cells = cache.get(occurrence.facts);
    if (!cells) {
      cells = fixed(occurrence.facts);
      cache.set(occurrence.facts, cells);
    }
    yield { level: occurrence.level, cells: row(occurrence, cells) };
  }
}

/** Depth-first rows with a level and an item number (1, 1.1, 1.2, 2, ...). */
export function hierarchicalRows(walk: TreeWalk): ExportRows {
  const fixed = ({ row: line, qty, refdes, extendedCost, warnings }: LineFacts): Cell[] => [
    text(line.part_number),
    text(line.name),
    qty,
    text(line.uom),
    text(refdes),
    text(line.notes),
    line.sort_index,
    text(walk.assemblyOf.get(line.bom_id) ?? ''),
    text(line.bom_revision),
    line.unit_cost === null ? null : Number(line.unit_cost),
    line.currency,
    ...extendedCostCells(extendedCost),
    alternatesText(line.alternates),
    line.date_from ?? null,
    line.date_to ?? null,
    line.serial_from === null ? null : Number(line.serial_from),
    line.serial_to === null ? null : Number(line.serial_to),
    text(line.lot_from),
    text(line.lot_to),
    Object.keys(line.attributes).length > 0 ? text(JSON.stringify(line.attributes)) : null,
    warnings.length > 0 ? text(warnings.map((w) => w.message).join('; ')) : null,
  ];
  return {
    header: [...HIERARCHICAL_COLUMNS],
    rows: rowsOf(walk, fixed, (o, c) => [
      o.level,
      o.itemNumber,
      c[0],
      c[1],
      c[2],
      o.extendedQty,
      ...c.slice(3),
    ]),
  };
}

/** Parent/child pairs of every level, units as codes, cost columns when any line has a cost. */
export function erpRows(walk: TreeWalk): ExportRows {
  const costs = walk.anyCost;
  const columns = [
    'parent_part_number',
    'child_part_number',
    'child_description',
    'level',
    'qty_per_parent',
    'uom_code',
    'qty_per_top',
    'refdes',
    'date_from',
    'date_to',
    'serial_from',
    'serial_to',
    'lot_from',
    'lot_to',
    'bom_revision',
    ...(costs ? ['unit_cost', 'currency', 'extended_cost', 'extended_cost_currency'] : []),
  ];
  const fixed = ({ row: line, qty, refdes, extendedCost }: LineFacts): Cell[] => [
    text(line.part_number),
    text(line.name),
    qty,
    erpUnit(line.uom),
    text(refdes),
    line.date_from ?? null,
    line.date_to ?? null,
    line.serial_from === null ? null : Number(line.serial_from),
    line.serial_to === null ? null : Number(line.serial_to),
    text(line.lot_from),
    text(line.lot_to),
    text(line.bom_revision),
    ...(costs
      ? [
          line.unit_cost === null ? null : Number(line.unit_cost),
          line.currency,
          ...extendedCostCells(extendedCost),
        ]
      : []),
  ];
  return {
    header: columns,
    rows: rowsOf(walk, fixed, (o, c) => [
      text(o.parentPartNumber),
      c[0],
      c[1],
      o.level,
      c[2],
      c[3],
      o.extendedQty,
      ...c.slice(4),
    ]),
  };
}

/** Bumped when an export's columns or cell formats change, so clients holding an old ETag refetch. */
const EXPORT_FORMAT_VERSION = 2;

/**
 * A strong ETag of an export: its format, the BOM, and the id of the latest change that can reach
 * the BOM's tree (see BomsService.treeChange). Any such change gives a new tag; none, the same one.
 */
export function exportEtag(format: string, bomId: string, changeId: number): string {
  const hash = createHash('sha256').update(`${EXPORT_FORMAT_VERSION}\n${format}\n${bomId}\n${changeId}`);
  return `"${hash.digest('base64url').slice(0, 32)}"`;
}

/**
 * The whole second an HTTP date gives a change at `at`: the second after the one it happened in, so
 * that a change made after a reader's answer (even within the same second) always has a later one.
 */
const changeSecond = (at: Date) => (Math.floor(at.getTime() / 1000) + 1) * 1000;

/** Last-Modified of a change: its second (see changeSecond), never later than now (RFC 9110 8.8.2.1). */
export function lastModified(at: Date): string {
  return new Date(Math.min(changeSecond(at), Math.floor(Date.now() / 1000) * 1000)).toUTCString();
}

/**
 * Whether a conditional GET may be answered 304 (RFC 9110 section 13.2.2): If-None-Match names the
 * ETag (weak comparison); without If-None-Match, If-Modified-Since is a valid date not before the
 * last change's second. A poll in the very second of a change gets the export again rather than a
 * 304 (its Last-Modified is capped at now); a change whose transaction was still committing while
 * a reader read (milliseconds) can be missed by If-Modified-Since, never by the ETag.
 */
export function notModified(
  ifNoneMatch: string | undefined,
  etag: string,
  ifModifiedSince?: string,
  changedAt?: Date | null,
): boolean {
  if (ifNoneMatch) {
    if (ifNoneMatch.trim() === '*') return true;
    const bare = etag.replace(/^W\//, '');
    return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
  }
  if (!ifModifiedSince || !changedAt) return false;
  const since = Date.parse(ifModifiedSince);
  return Number.isFinite(since) && changeSecond(changedAt) <= since;
}

/** Rows written per socket write. */
const CHUNK_ROWS = 500;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, or starts or ends
 * with a blank (as papaparse's writer does, so the import reads it back the same).
 */
function csvField(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return String(cell);
  return /[",\r\n\uFEFF]|^ | $/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/**
 * Writes the rows as CSV (UTF-8 with BOM, CRLF) as the walk yields them, in chunks, waiting whenever
 * the socket is full (a client that stops reading holds one chunk, not the export).
 */
export async function streamCsv(res: Response, table: ExportRows): Promise<void> {
  const write = async (chunk: string) => {
    if (!res.write(chunk)) await drainedOrClosed(res);
  };
  let chunk = `\uFEFF${table.header.map(csvField).join(',')}\r\n`;
  let count = 0;
  for (const row of table.rows) {
    if (res.destroyed) return;
    chunk += `${row.cells.map(csvField).join(',')}\r\n`;
    if (++count === CHUNK_ROWS) {
      await write(chunk);
      chunk = '';
      count = 0;
    }
  }
  if (chunk) await write(chunk);
  res.end();
}

/**
 * Writes the rows as an XLSX workbook (one sheet, typed cells, rows grouped in an outline by level) as
 * the walk yields them; memory stays flat in the number of rows, and a full socket is waited for.
 */
export async function streamXlsx(res: Response, table: ExportRows, sheetName: string): Promise<void> {
  const sheet = sheetWriter(
    res,
    sheetName,
    table.header.map((name) => Math.max(8, name.length + 2)),
  );
  await sheet.row(table.header);
  for (const row of table.rows) {
    if (res.destroyed) return;
    await sheet.row(row.cells, row.level - 1);
  }
  await sheet.end();
}
