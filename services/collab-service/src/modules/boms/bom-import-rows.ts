import { type AlternateApproval, type ImportRowProblem, PART_NUMBER_PATTERN } from '@hwp/contracts';
import { newId, ValidationError } from '@hwp/platform';
import { type HeaderMapping, parseDecimal, parseJsonObject } from '../../spreadsheets';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { BomItemEntity } from './bom.entity';
import { unneutralise } from './bom-export';
import { checkEffectivity } from './effectivity';
import { countRefdes, expandRefdes, RefdesError } from './refdes';

/**
 * Columns of the BOM import (section 2.9; matching ignores case, spaces, `_`, `-`). Besides the
 * document's, the hierarchical export's columns are read back, so an export imports as the same BOM:
 * `level` nests a row under the row above it one level up, `assembly` tells lines of sub-assemblies'
 * own BOMs (skipped) from this BOM's, and effectivity, alternates and attributes come along.
 */
export const BOM_IMPORT_ALIASES = {
  childPartNumber: ['child_part_number', 'part_number', 'pn', 'child_pn'],
  qty: ['quantity'],
  uom: ['unit', 'unit_of_measure'],
  refdes: ['reference_designators', 'reference', 'designators'],
  notes: ['note', 'comment', 'comments'],
  level: ['bom_level'],
  assembly: ['parent_assembly'],
  name: ['part_name', 'description'],
  sortIndex: ['sort_index'],
  alternates: ['alternate_parts'],
  dateFrom: ['date_from', 'effective_from'],
  dateTo: ['date_to', 'effective_to'],
  serialFrom: ['serial_from'],
  serialTo: ['serial_to'],
  lotFrom: ['lot_from'],
  lotTo: ['lot_to'],
  attributes: ['attrs'],
} as const;
export type BomImportField = keyof typeof BOM_IMPORT_ALIASES;

/** Export columns computed from the rest: read by nobody, and not reported as unknown. */
export const DERIVED = new Set(
  [
    'item_number',
    'extended_qty',
    'bom_revision',
    'unit_cost',
    'currency',
    'extended_cost',
    'extended_cost_currency',
    'warnings',
  ].map((h) => h.replace(/_/g, '')),
);

/** One line of the file as the import will write it (`parentId` set once its level is placed). */
export interface PlannedLine {
  row: number;
  id: string;
  parentId: string | null;
  level: number;
  partNumber: string;
  name: string | null;
  qty: number;
  uom: string;
  refdes: string[];
  notes: string;
  sortIndex: number;
  attributes: Record<string, unknown>;
  effectivity: Pick<BomItemEntity, 'dateFrom' | 'dateTo' | 'serialFrom' | 'serialTo' | 'lotFrom' | 'lotTo'>;
  alternates: { partNumber: string; approval: AlternateApproval }[];
}

/** A row's cell of a field: trimmed, its spreadsheet-formula neutralising undone, `''` without the column. */
export type CellOf = (values: string[], field: BomImportField) => string;

/** The cell reader of a sheet whose headers matched as `mapping` says. */
export function cellsOf(headers: string[], mapping: HeaderMapping<BomImportField>): CellOf {
  const index = new Map<BomImportField, number>();
  for (const [field, header] of Object.entries(mapping.columns) as [BomImportField, string][])
    index.set(field, headers.indexOf(header));
  return (values, field) => {
    const i = index.get(field);
    return i === undefined || i < 0 ? '' : unneutralise((values[i] ?? '').trim());
  };
}

/** What reading a row needs besides the row: where its problems go and what the file has used up. */
export interface RowReading {
  cell: CellOf;
  fail: (row: number, field: BomImportField, message: string) => void;
  warnings: ImportRowProblem[];
  decimal: 'dot' | 'comma';
  access: WorkspaceScope;
  /** Designators of the whole file: the budget and what is left of it. */
  designators: { budget: number; left: number; column: string };
}

/**
 * One data row as a planned line, its problems reported through `reading` (the line comes back
 * even then, so the rows under it still find their parent). A file past its designator budget is
 * refused at once (400).
 */
export function readBomRow(values: string[], row: number, reading: RowReading): PlannedLine | null {
  const { cell, fail, warnings, decimal, access, designators } = reading;
  const partNumber = cell(values, 'childPartNumber');
  if (!partNumber) fail(row, 'childPartNumber', 'required');
  else if (!PART_NUMBER_PATTERN.test(partNumber))
    fail(row, 'childPartNumber', 'not a part number (letters, digits and . _ / # + -, at most 64)');
  const qtyCell = parseDecimal(cell(values, 'qty'), decimal);
  let qty = 0;
  if (!qtyCell.ok) fail(row, 'qty', qtyCell.message);
  else if (qtyCell.value === undefined) fail(row, 'qty', 'required');
  else if (!(Number(qtyCell.value) > 0)) fail(row, 'qty', 'must be greater than 0');
  else qty = Number(qtyCell.value);
  const levelText = cell(values, 'level');
  const level = levelText === '' ? 1 : Number(levelText);
  if (!Number.isInteger(level) || level < 1 || level > 64)
    fail(row, 'level', 'must be a whole number from 1 to 64');
  const uom = (cell(values, 'uom') || 'each').toLowerCase();
  if (uom.length > 16) fail(row, 'uom', 'at most 16 characters');
  let refdes: string[] = [];
  const text = cell(values, 'refdes');
  try {
    const count = countRefdes(text);
    if (count > designators.left) {
      throw new ValidationError(
        `Row ${row}, column ${designators.column}: the file holds more than ${designators.budget} reference designators (ranges count their size); split the file into several imports`,
        [
          {
            field: 'file',
            message: `row ${row} (${designators.column}): the file holds more than ${designators.budget} reference designators`,
          },
        ],
      );
    }
    designators.left -= count;
    refdes = expandRefdes(text);
  } catch (error) {
    if (!(error instanceof RefdesError)) throw error;
    fail(row, 'refdes', error.message);
  }
  if (uom === 'each' && refdes.length > 0 && qty > 0 && refdes.length !== qty) {
    warnings.push({
      row,
      column: 'refdes',
      message: `${refdes.length} reference designators for a quantity of ${qty}`,
    });
  }
  const serial = (field: 'serialFrom' | 'serialTo') => {
    const value = cell(values, field);
    if (value === '') return null;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) {
      fail(row, field, 'must be a whole number');
      return null;
    }
    return n;
  };
  const date = (field: 'dateFrom' | 'dateTo') => {
    const value = cell(values, field);
    if (value === '') return null;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value))) {
      fail(row, field, 'must be an ISO date (YYYY-MM-DD)');
      return null;
    }
    return value;
  };
  const effectivity = {
    dateFrom: date('dateFrom'),
    dateTo: date('dateTo'),
    serialFrom: serial('serialFrom'),
    serialTo: serial('serialTo'),
    lotFrom: cell(values, 'lotFrom') || null,
    lotTo: cell(values, 'lotTo') || null,
  };
  const order = checkEffectivity(effectivity);
  if (order) fail(row, order.field as BomImportField, order.message);
  const attributes = parseJsonObject(cell(values, 'attributes'));
  if (!attributes.ok) fail(row, 'attributes', attributes.message);
  const alternates: PlannedLine['alternates'] = [];
  for (const entry of cell(values, 'alternates')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const match = /^(.*?)\s*\((approved|conditional|rejected)\)$/i.exec(entry);
    const approval = (match?.[2].toLowerCase() ?? 'conditional') as AlternateApproval;
    if (approval === 'approved' && !atLeast(access.role, 'manager')) {
      fail(row, 'alternates', 'only a manager or owner may import approved alternates');
    }
    alternates.push({ partNumber: unneutralise(match?.[1] ?? entry), approval });
  }
  const sortText = cell(values, 'sortIndex');
  const sortIndex = sortText === '' ? -1 : Number(sortText);
  if (!Number.isInteger(sortIndex) || sortIndex < -1) fail(row, 'sortIndex', 'must be a whole number');
  const notes = cell(values, 'notes');
  return {
    row,
    id: newId(),
    parentId: null,
    level: Number.isInteger(level) ? level : 1,
    partNumber,
    name: cell(values, 'name') || null,
    qty,
    uom,
    refdes,
    notes,
    sortIndex,
    attributes: (attributes.ok ? attributes.value : undefined) ?? {},
    effectivity,
    alternates,
  };
}
