import { createHash } from 'node:crypto';
import type { Bom, BomAlternate, CurrencyAmount } from '@hwp/contracts';
import { drainedOrClosed } from '@hwp/platform';
import type { Response } from 'express';
import Papa from 'papaparse';
import { xlsx } from '../parts/import/xlsx-module';
import type { ExpandedNode, ExpandedTree } from './bom-tree';

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

/** The assembly each BOM in the tree belongs to: the root's, and each sub-BOM's node part. */
function assemblies(tree: ExpandedTree, header: Bom): Map<string, string> {
  const byBom = new Map<string, string>([[header.id, header.assemblyPartNumber]]);
  for (const node of tree.nodes) if (node.subBomId) byBom.set(node.subBomId, node.partNumber);
  return byBom;
}

/** Depth-first rows with a level and an item number (1, 1.1, 1.2, 2, ...). */
export function hierarchicalTable(header: Bom, tree: ExpandedTree): ExportTable {
  const byBom = assemblies(tree, header);
  const rows: ExportRow[] = [];
  const walk = (nodes: ExpandedNode[], prefix: string) => {
    nodes.forEach((node, index) => {
      const itemNumber = prefix ? `${prefix}.${index + 1}` : String(index + 1);
      rows.push({
        level: node.level,
        cells: [
          node.level,
          itemNumber,
          text(node.partNumber),
          text(node.name),
          node.qty,
          node.extendedQty,
          text(node.uom),
          text(node.refdes),
          text(node.notes),
          node.sortIndex,
          text(byBom.get(node.bomId) ?? ''),
          text(node.bomRevision),
          node.unitCost,
          node.currency,
          ...extendedCostCells(node.extendedCost),
          alternatesText(node.alternates),
          node.dateFrom ?? null,
          node.dateTo ?? null,
          node.serialFrom ?? null,
          node.serialTo ?? null,
          text(node.lotFrom),
          text(node.lotTo),
          Object.keys(node.attributes).length > 0 ? text(JSON.stringify(node.attributes)) : null,
          node.warnings.length > 0 ? text(node.warnings.map((w) => w.message).join('; ')) : null,
        ],
      });
      walk(node.children, itemNumber);
    });
  };
  walk(tree.top, '');
  return { header: [...HIERARCHICAL_COLUMNS], rows };
}

/** Parent/child pairs of every level, units as codes, cost columns when any line has a cost. */
export function erpTable(header: Bom, tree: ExpandedTree): ExportTable {
  const costs = tree.nodes.some((n) => n.unitCost !== null);
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
  const rows = tree.nodes.map((node) => ({
    level: node.level,
    cells: [
      text(node.partPath[node.partPath.length - 2] ?? header.assemblyPartNumber),
      text(node.partNumber),
      text(node.name),
      node.level,
      node.qty,
      erpUnit(node.uom),
      node.extendedQty,
      text(node.refdes),
      node.dateFrom ?? null,
      node.dateTo ?? null,
      node.serialFrom ?? null,
      node.serialTo ?? null,
      text(node.lotFrom),
      text(node.lotTo),
      text(node.bomRevision),
      ...(costs ? [node.unitCost, node.currency, ...extendedCostCells(node.extendedCost)] : []),
    ],
  }));
  return { header: columns, rows };
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

const CHUNK_ROWS = 500;

/** Writes the table as CSV (UTF-8 with BOM, CRLF) in chunks, waiting whenever the socket is full. */
export async function streamCsv(res: Response, table: ExportTable): Promise<void> {
  const write = async (chunk: string) => {
    if (!res.write(chunk)) await drainedOrClosed(res);
  };
  await write(`\uFEFF${Papa.unparse([table.header], { newline: '\r\n' })}\r\n`);
  for (let i = 0; i < table.rows.length && !res.destroyed; i += CHUNK_ROWS) {
    const cells = table.rows
      .slice(i, i + CHUNK_ROWS)
      .map((row) => row.cells.map((c) => (c === null ? '' : c)));
    await write(`${Papa.unparse(cells, { newline: '\r\n' })}\r\n`);
  }
  res.end();
}

/** The table as an XLSX workbook: one sheet, typed cells, rows grouped in an outline by level. */
export function xlsxBuffer(table: ExportTable, sheetName: string): Buffer {
  const XLSX = xlsx();
  const sheet = XLSX.utils.aoa_to_sheet([table.header, ...table.rows.map((row) => row.cells)]);
  sheet['!rows'] = [{}, ...table.rows.map((row) => ({ level: Math.min(7, Math.max(0, row.level - 1)) }))];
  sheet['!cols'] = table.header.map((name) => ({ wch: Math.max(8, name.length + 2) }));
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, sheet, sheetName.replace(/[\\/?*[\]:]/g, '_').slice(0, 31) || 'BOM');
  return XLSX.write(book, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer;
}
