import {
  type ImportRowProblem,
  PART_DOMAINS,
  PART_LIFECYCLES,
  PART_NUMBER_PATTERN,
  type PartDomain,
  type PartLifecycle,
} from '@hwp/contracts';
import { parseBoolean, parseDecimal, parseJsonObject, splitTags } from '../../../spreadsheets/cell-values';
import { type HeaderMapping } from '../../../spreadsheets/headers';
import type { CellError, ParsedSheet, RowBatch } from '../../../spreadsheets/parse-spreadsheet';
import { isCurrencyCode } from '../part-rules';
import { PART_IMPORT_ALIASES, type PartImportField } from './header-aliases';

/**
 * The part fields one import row sets. A blank cell (or a missing column) leaves the field out:
 * an existing part keeps its value, a new part gets the default.
 */
export interface PartRowValues {
  partNumber: string;
  name?: string;
  description?: string;
  domain?: PartDomain;
  uom?: string;
  lifecycle?: PartLifecycle;
  tags?: string[];
  attributes?: Record<string, unknown>;
  manufacturerName?: string;
  manufacturerPartNumber?: string;
  unitCost?: number;
  currency?: string;
  rohsCompliant?: boolean;
  reachCompliant?: boolean;
  conflictMinerals?: string;
}

/** A row that passed the checks that need no database. */
export interface PartRow {
  /** 1-based row in the file. */
  row: number;
  /** The part number in lower case: part numbers are unique per workspace case-insensitively. */
  key: string;
  values: PartRowValues;
}

/** Limits of the JSON routes (contracts `PartFields`), applied to import cells too. */
const MAX_LENGTH: Partial<Record<PartImportField, number>> = {
  name: 200,
  description: 4000,
  uom: 32,
  manufacturerName: 200,
  manufacturerPartNumber: 100,
  conflictMinerals: 100,
};
const MAX_TAGS = 100;
const MAX_TAG_LENGTH = 64;
/** numeric(18,6): 12 integer digits. */
const MAX_COST = 1e12;

const DOMAINS = new Set<string>(PART_DOMAINS);
const LIFECYCLES = new Set<string>(PART_LIFECYCLES);

/** The snake_case name of a field, for problems about a column the file does not have. */
export function columnName(field: PartImportField): string {
  return PART_IMPORT_ALIASES[field][0] ?? field;
}

/**
 * Reads the part rows of a parsed sheet, one at a time, with the checks that need no database:
 * formats, lengths, enumerations, numbers, JSON, and part numbers repeated within the file (the
 * later row is the error). Problems name the column as the file spells it.
 */
export class PartRowReader {
  private readonly firstRowOf = new Map<string, number>();
  /** Where each mapped field's values are in a row (the first header naming it). */
  private readonly index: Partial<Record<PartImportField, number>> = {};
  private readonly decimal: 'dot' | 'comma';

  constructor(
    sheet: Pick<ParsedSheet, 'headers' | 'format'>,
    private readonly mapping: HeaderMapping<PartImportField>,
    /** The decimal separator of the file's numeric cells (CSV only; XLSX numbers are typed). */
    decimal: 'dot' | 'comma' = 'dot',
  ) {
    for (const [field, header] of Object.entries(mapping.columns) as [PartImportField, string][]) {
      this.index[field] = sheet.headers.indexOf(header);
    }
    this.decimal = sheet.format === 'csv' ? decimal : 'dot';
  }

  /**
   * The rows of one batch of the sheet (they come in file order): those that passed, and the
   * problems of those that did not, in row order.
   */
  read(batch: RowBatch): { rows: PartRow[]; problems: ImportRowProblem[] } {
    const cellErrors = new Map<number, CellError[]>();
    for (const error of batch.cellErrors) {
      const list = cellErrors.get(error.row) ?? [];
      list.push(error);
      cellErrors.set(error.row, list);
    }
    const rows: PartRow[] = [];
    const problems: ImportRowProblem[] = [];
    for (let i = 0; i < batch.rows.length; i++) {
      const rowNumber = batch.rowNumbers[i];
      const result = this.take(batch.rows[i], rowNumber, cellErrors.get(rowNumber) ?? []);
      if ('row' in result) rows.push(result.row);
      else problems.push(...result.problems);
    }
    return { rows, problems };
  }

  /** One row: the values, or the problems that refuse it (never both). */
  private take(
    cells: string[],
    rowNumber: number,
    cellErrors: CellError[],
  ): { row: PartRow } | { problems: ImportRowProblem[] } {
    const problems: ImportRowProblem[] = cellErrors.map((e) => ({
      row: rowNumber,
      column: e.column,
      message: e.message,
    }));
    const fail = (field: PartImportField, message: string) =>
      problems.push({ row: rowNumber, column: this.mapping.columns[field] ?? columnName(field), message });
    const text = (field: PartImportField): string | undefined => {
      const at = this.index[field];
      const value = at === undefined ? '' : cells[at];
      if (value === undefined || value === '') return undefined;
      // Postgres text cannot hold U+0000 (nor can jsonb, as an escape inside attributes).
      if (value.includes('\0')) {
        fail(field, 'The cell contains a NUL character (U+0000), which no text field can hold');
        return undefined;
      }
      const limit = MAX_LENGTH[field];
      if (limit !== undefined && value.length > limit) {
        fail(field, `At most ${limit} characters (this cell has ${value.length})`);
        return undefined;
      }
      return value;
    };

    const partNumber = text('partNumber');
    const values: PartRowValues = { partNumber: partNumber ?? '' };
    if (partNumber === undefined) fail('partNumber', 'A part number is required');
    else if (!PART_NUMBER_PATTERN.test(partNumber))
      fail(
        'partNumber',
        'Part numbers are 1-64 letters, digits or . _ / # + - (starting with a letter or digit)',
      );

    for (const field of [
      'name',
      'description',
      'uom',
      'manufacturerName',
      'manufacturerPartNumber',
    ] as const) {
      const value = text(field);
      if (value !== undefined) values[field] = value;
    }
    const conflictMinerals = text('conflictMinerals');
    if (conflictMinerals !== undefined) values.conflictMinerals = conflictMinerals;

    const domain = text('domain')?.toLowerCase();
    if (domain !== undefined) {
      if (DOMAINS.has(domain)) values.domain = domain as PartDomain;
      else fail('domain', `Unknown domain "${domain}"; use one of ${PART_DOMAINS.join(', ')}`);
    }
    const lifecycle = text('lifecycle')
      ?.toLowerCase()
      .replace(/[\s-]+/g, '_');
    if (lifecycle !== undefined) {
      if (LIFECYCLES.has(lifecycle)) values.lifecycle = lifecycle as PartLifecycle;
      else fail('lifecycle', `Unknown lifecycle "${lifecycle}"; use one of ${PART_LIFECYCLES.join(', ')}`);
    }

    const tags = text('tags');
    if (tags !== undefined) {
      const list = splitTags(tags);
      const long = list.find((t) => t.length > MAX_TAG_LENGTH);
      if (list.length > MAX_TAGS) fail('tags', `At most ${MAX_TAGS} tags`);
      else if (long)
        fail('tags', `Tags are at most ${MAX_TAG_LENGTH} characters ("${long.slice(0, 20)}...")`);
      else values.tags = list;
    }

    const attributes = text('attributes');
    if (attributes !== undefined) {
      const parsed = parseJsonObject(attributes);
      if (!parsed.ok) fail('attributes', parsed.message);
      else if (parsed.value !== undefined) values.attributes = parsed.value;
    }

    const cost = text('unitCost');
    if (cost !== undefined) {
      const parsed = parseDecimal(cost, this.decimal);
      if (!parsed.ok) fail('unitCost', parsed.message);
      else if (parsed.value !== undefined) {
        const [, decimals = ''] = parsed.value.split('.');
        const amount = Number(parsed.value);
        if (amount < 0) fail('unitCost', 'A cost cannot be negative');
        else if (decimals.length > 6) fail('unitCost', 'At most 6 decimal places');
        else if (amount >= MAX_COST) fail('unitCost', 'The cost is out of range');
        else values.unitCost = amount;
      }
    }

    const currency = text('currency')?.toUpperCase();
    if (currency !== undefined) {
      if (isCurrencyCode(currency)) values.currency = currency;
      else fail('currency', `${currency} is not an ISO 4217 currency code`);
    }

    for (const field of ['rohsCompliant', 'reachCompliant'] as const) {
      const value = text(field);
      if (value === undefined) continue;
      const parsed = parseBoolean(value);
      if (!parsed.ok) fail(field, parsed.message);
      else if (parsed.value !== undefined) values[field] = parsed.value;
    }

    if (partNumber !== undefined && PART_NUMBER_PATTERN.test(partNumber)) {
      const key = partNumber.toLowerCase();
      const first = this.firstRowOf.get(key);
      if (first !== undefined)
        fail('partNumber', `Part number ${partNumber} is already on row ${first} of this file`);
      else this.firstRowOf.set(key, rowNumber);
      if (problems.length === 0) return { row: { row: rowNumber, key, values } };
    }
    return { problems };
  }
}
