import type { CellError, RejectionReason, WorkerMessage } from './parse-protocol';

/**
 * Turns raw rows of either format into the header list and row batches the worker posts:
 * finds the header row, drops blank rows, enforces the row limit, batches rows for progress.
 * Runs inside the parse worker; no imports from the workspace packages.
 */

/** A file the parser refuses; the worker reports it, `parseSpreadsheet` maps it to a 4xx. */
export class Rejection extends Error {
  constructor(
    readonly reason: RejectionReason,
    message: string,
  ) {
    super(message);
    this.name = 'Rejection';
  }
}

/** A cell's text, or why the cell cannot give one (a formula without a cached value, #DIV/0!). */
export type RawCell = string | { error: string } | undefined;

/** Column letters as a spreadsheet shows them: 0 -> A, 25 -> Z, 26 -> AA. */
export function columnLetter(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}

function isBlank(cell: RawCell): boolean {
  return cell === undefined || (typeof cell === 'string' && cell.trim() === '');
}

export class RowCollector {
  private headers: string[] | null = null;
  /** File column index of each header. */
  private columns: number[] = [];
  private headed = new Set<number>();
  private dataRows = 0;
  private batch: string[][] = [];
  private batchRowNumbers: number[] = [];
  private batchErrors: CellError[] = [];

  constructor(
    private readonly maxRows: number,
    private readonly batchSize: number,
    private readonly post: (message: WorkerMessage) => void,
    private readonly describe: { delimiter?: string; sheetName?: string } = {},
  ) {}

  /** Takes one file row; `rowNumber` is 1-based. Rows must come in file order. */
  accept(rowNumber: number, cells: readonly RawCell[]): void {
    if (cells.every(isBlank)) return;
    if (this.headers === null) {
      this.readHeaders(rowNumber, cells);
      return;
    }
    this.dataRows += 1;
    if (this.dataRows > this.maxRows) {
      throw new Rejection(
        'too_large',
        `The file has more than ${this.maxRows.toLocaleString('en-US')} data rows (the import limit)`,
      );
    }
    const values = this.columns.map((column, i) => {
      const cell = cells[column];
      if (cell === undefined) return '';
      if (typeof cell === 'string') return cell.trim();
      this.batchErrors.push({ row: rowNumber, column: this.headers![i], message: cell.error });
      return '';
    });
    cells.forEach((cell, column) => {
      if (this.headed.has(column) || typeof cell !== 'string' || cell.trim() === '') return;
      const letter = columnLetter(column);
      this.batchErrors.push({
        row: rowNumber,
        column: letter,
        message: `Column ${letter} has a value but no header`,
      });
    });
    this.batch.push(values);
    this.batchRowNumbers.push(rowNumber);
    if (this.batch.length >= this.batchSize) this.flush();
  }

  /** Posts the last batch; throws when the file had no header row. */
  finish(): void {
    if (this.headers === null) throw new Rejection('invalid', 'The file is empty: it has no header row');
    this.flush();
  }

  private readHeaders(rowNumber: number, cells: readonly RawCell[]): void {
    const headers: string[] = [];
    const seen = new Map<string, number>();
    cells.forEach((cell, column) => {
      if (cell !== undefined && typeof cell !== 'string') {
        throw new Rejection(
          'invalid',
          `Header cell ${columnLetter(column)}${rowNumber} has no value: ${cell.error}`,
        );
      }
      const header = (cell ?? '').trim();
      if (header === '') return;
      const earlier = seen.get(header);
      if (earlier !== undefined) {
        throw new Rejection(
          'invalid',
          `The header "${header}" appears twice (columns ${columnLetter(earlier)} and ${columnLetter(column)})`,
        );
      }
      seen.set(header, column);
      headers.push(header);
      this.columns.push(column);
      this.headed.add(column);
    });
    this.headers = headers;
    this.post({ type: 'headers', headers, ...this.describe });
  }

  private flush(): void {
    if (this.batch.length === 0 && this.batchErrors.length === 0) return;
    this.post({
      type: 'rows',
      rows: this.batch,
      rowNumbers: this.batchRowNumbers,
      cellErrors: this.batchErrors,
    });
    this.batch = [];
    this.batchRowNumbers = [];
    this.batchErrors = [];
  }
}
