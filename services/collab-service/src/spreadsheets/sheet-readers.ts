import Papa from 'papaparse';
import type * as XLSX from 'xlsx';
import { type RawCell, Rejection, type RowCollector } from './row-collector';
import { xlsx } from './xlsx-module';

/**
 * The two format readers. They run inside the parse worker (xlsx 0.18.5 has prototype-pollution
 * and ReDoS advisories; the worker's memory and time limits contain them). No imports from the
 * workspace packages.
 */

const CSV_DELIMITERS = [',', ';', '\t'];
/** Enough text for papaparse to guess the delimiter from its first rows. */
const DELIMITER_SAMPLE_CHARS = 64 * 1024;

/** Reads a UTF-8 CSV (a BOM is dropped); the delimiter is `,`, `;` or tab, guessed from the first rows. */
export function readCsv(data: Uint8Array, collect: (describe: { delimiter: string }) => RowCollector): void {
  let text: string;
  try {
    // ignoreBOM defaults to false: a UTF-8 BOM is stripped.
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new Rejection(
      'unsupported',
      'The CSV file is not UTF-8 text (it has bytes that are not valid UTF-8, e.g. Latin-1 or Windows-1252 ' +
        'accents); save it as "CSV UTF-8" and upload it again',
    );
  }
  // Blank lines are skipped for the guess only: the real pass keeps them so row numbers match the file.
  const guess = Papa.parse<string[]>(text.slice(0, DELIMITER_SAMPLE_CHARS), {
    preview: 20,
    delimitersToGuess: CSV_DELIMITERS,
    skipEmptyLines: 'greedy',
  });
  const delimiter = guess.meta.delimiter || ',';
  const collector = collect({ delimiter });

  let rowNumber = 0;
  let failure: unknown;
  Papa.parse<string[]>(text, {
    delimiter,
    step: (result, parser) => {
      rowNumber += 1;
      try {
        const quotes = result.errors.find((error) => error.type === 'Quotes');
        if (quotes) {
          const what =
            quotes.code === 'MissingQuotes'
              ? 'a quoted field is never closed'
              : 'a quoted field is malformed (a quote inside quotes must be doubled)';
          throw new Rejection('invalid', `Row ${rowNumber} of the CSV file: ${what}`);
        }
        collector.accept(rowNumber, result.data);
      } catch (error) {
        failure = error;
        parser.abort();
      }
    },
  });
  if (failure !== undefined) throw failure;
  collector.finish();
}

/**
 * Options for `XLSX.read`. xlsx has no formula engine, so nothing here evaluates a formula. Two
 * options are on so that a formula cell whose file stores no result can be reported as a cell
 * error instead of passing for an empty cell: `cellFormula` keeps the formula text (`f`) and
 * `sheetStubs` (xlsx's name for keeping cells that have no value, type `z`) keeps such a cell at
 * all; without it the cell is dropped and the row imports with that column blank (the parser test
 * "reads the cached value of a formula" fails). Values are read from the stored result (`v`) only.
 */
const XLSX_OPTIONS: XLSX.ParsingOptions = {
  type: 'buffer',
  sheets: 0,
  dense: true,
  cellFormula: true,
  sheetStubs: true,
  cellHTML: false,
  cellNF: false,
  cellStyles: false,
  cellText: false,
  cellDates: true,
  bookVBA: false,
  bookFiles: false,
  bookDeps: false,
  bookProps: false,
  WTF: false,
};

const NO_CACHED_VALUE =
  'The cell holds a formula without a saved value; formulas are not evaluated, so recalculate and ' +
  'save the file in a spreadsheet app, or paste the values';

const ERROR_VALUES = new Map<number, string>([
  [0x00, '#NULL!'],
  [0x07, '#DIV/0!'],
  [0x0f, '#VALUE!'],
  [0x17, '#REF!'],
  [0x1d, '#NAME?'],
  [0x24, '#NUM!'],
  [0x2a, '#N/A'],
  [0x2b, '#GETTING_DATA'],
]);

/** Reads the first sheet of a workbook whose ZIP structure `inspectZip` and `verifyZipEntries` accepted. */
export function readXlsx(data: Uint8Array, collect: (describe: { sheetName: string }) => RowCollector): void {
  const builtins = builtinShapes();
  let workbook: XLSX.WorkBook;
  try {
    workbook = xlsx().read(Buffer.from(data.buffer, data.byteOffset, data.byteLength), XLSX_OPTIONS);
  } catch (error) {
    if (error instanceof RangeError) throw new Rejection('too_large', 'The XLSX file is too large to read');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Rejection('invalid', `The XLSX file cannot be read: ${reason.slice(0, 200)}`);
  }
  // A crafted file that adds properties to built-in prototypes (CVE-2023-30533) is refused outright.
  if (builtinShapes() !== builtins) {
    throw new Rejection('invalid', 'The XLSX file tried to modify built-in objects; it is refused');
  }
  const sheetName = workbook.SheetNames[0];
  const sheet = sheetName === undefined ? undefined : workbook.Sheets[sheetName];
  if (sheetName === undefined || sheet === undefined)
    throw new Rejection('invalid', 'The XLSX file has no sheet');

  const collector = collect({ sheetName });
  const rows = denseRows(sheet);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    if (row) collector.accept(r + 1, row.map(cellValue));
  }
  collector.finish();
}

function builtinShapes(): string {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype]
    .map((proto) => Object.getOwnPropertyNames(proto).join(','))
    .join('|');
}

type DenseRows = (XLSX.CellObject | undefined)[][];

/** The sheet as rows of cells: xlsx 0.18 returns an array in dense mode, 0.19+ a `!data` array. */
function denseRows(sheet: XLSX.WorkSheet): DenseRows {
  if (Array.isArray(sheet)) return sheet as unknown as DenseRows;
  const data = (sheet as { '!data'?: unknown })['!data'];
  if (Array.isArray(data)) return data as DenseRows;
  const rows: DenseRows = [];
  for (const address of Object.keys(sheet)) {
    if (address.startsWith('!')) continue;
    const { r, c } = xlsx().utils.decode_cell(address);
    rows[r] ??= [];
    rows[r][c] = sheet[address] as XLSX.CellObject;
  }
  return rows;
}

function cellValue(cell: XLSX.CellObject | undefined): RawCell {
  if (!cell) return undefined;
  switch (cell.t) {
    case 'z':
      return cell.f !== undefined || cell.F !== undefined ? { error: NO_CACHED_VALUE } : undefined;
    case 's':
      return String(cell.v ?? '');
    case 'n':
      return typeof cell.v === 'number' ? numberText(cell.v) : String(cell.v ?? '');
    case 'b':
      return cell.v ? 'true' : 'false';
    case 'd':
      return cell.v instanceof Date ? dateText(cell.v) : String(cell.v ?? '');
    case 'e':
      return { error: `The cell holds the error value ${ERROR_VALUES.get(Number(cell.v)) ?? '#ERROR'}` };
    default:
      return undefined;
  }
}

/** Like a spreadsheet shows a number in General format: 15 significant digits (0.1+0.2 -> 0.3). */
export function numberText(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(15)));
}

/**
 * `YYYY-MM-DD` for a whole day, else `YYYY-MM-DDTHH:mm:ss`. Spreadsheet dates carry no time zone and
 * xlsx 0.18 builds them in the process's local time, so the local fields are the sheet's wall clock.
 */
function dateText(value: Date): string {
  if (Number.isNaN(value.getTime())) return '';
  const two = (n: number) => String(n).padStart(2, '0');
  const day = `${String(value.getFullYear()).padStart(4, '0')}-${two(value.getMonth() + 1)}-${two(value.getDate())}`;
  const [hours, minutes, seconds] = [value.getHours(), value.getMinutes(), value.getSeconds()];
  return hours + minutes + seconds === 0 ? day : `${day}T${two(hours)}:${two(minutes)}:${two(seconds)}`;
}
