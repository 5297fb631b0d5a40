/**
 * What the spreadsheet reader takes and hands back: the upload, the limits and their defaults, and
 * the sheet as a whole (parseSpreadsheet) or as a stream of row batches (openSpreadsheet).
 */
import type { CellError, SheetFormat } from './parse-protocol';

/** An uploaded CSV or XLSX file, parsed; nothing is validated against the part fields yet. */
export interface ParsedSheet {
  format: SheetFormat;
  /** The header row's names as in the file (trimmed), in file order; blank header cells are left out. */
  headers: string[];
  /**
   * One array per non-blank data row, its values in `headers` order (`''` when empty; arrays, not
   * objects keyed by header, because a 100,000-row file is held in memory). Values are trimmed text:
   * XLSX numbers as a spreadsheet shows them in General format, booleans `true`/`false`, dates
   * `YYYY-MM-DD`.
   */
  rows: string[][];
  /** `rowNumbers[i]` is the 1-based row of `rows[i]` in the file (blank rows skipped, header counted). */
  rowNumbers: number[];
  rowCount: number;
  /**
   * Cells without a usable value: a formula without a cached value or an error value like #DIV/0!
   * (the row holds `''` there), or a value in a column without a header (not in the row). Report
   * them as row errors; `row` matches `rowNumbers`.
   */
  cellErrors: CellError[];
  /** CSV: the delimiter found (`,`, `;` or tab). */
  delimiter?: string;
  /** XLSX: the name of the first sheet, the one read. */
  sheetName?: string;
}

export interface ParseSpreadsheetInput {
  buffer: Uint8Array;
  filename?: string;
  contentType?: string;
}

export interface ParseSpreadsheetOptions {
  /** Default 50 MB (DECISIONS.md section 8); larger files get 413 before any parsing. */
  maxBytes?: number;
  /** Data rows, header not counted; default 200,000 (DECISIONS.md section 8); more gets 413. */
  maxRows?: number;
  /** Wall clock for the worker, default 60 s; it is terminated after that and the call gets 413. */
  timeoutMs?: number;
  /** The worker's V8 old-generation heap, default 1024 MB; running out gets 413. */
  maxMemoryMb?: number;
  /** XLSX: declared inflated size of the whole archive, default 256 MB. */
  maxUncompressedBytes?: number;
  /** XLSX: inflated/compressed ratio of one entry above 1 MB, default 100. */
  maxCompressionRatio?: number;
  /** Called with the number of data rows parsed so far, every `progressEvery` rows and at the end. */
  onProgress?: (rowsParsed: number) => void;
  /** Default 5,000. */
  progressEvery?: number;
  /**
   * The caller gives the buffer up: its memory moves to the worker without a copy (the buffer is
   * empty afterwards). Without it the worker parses a copy.
   */
  handOver?: boolean;
  /** Aborting terminates the worker and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export const MB = 1024 * 1024;

export const SPREADSHEET_DEFAULTS = {
  maxBytes: 50 * MB,
  maxRows: 200_000,
  timeoutMs: 60_000,
  maxMemoryMb: 1024,
  progressEvery: 5_000,
} as const;

/** Rows of the sheet as the parser hands them on, in file order. */
export interface RowBatch {
  /** One array per non-blank data row, as in {@link ParsedSheet.rows}. */
  rows: string[][];
  rowNumbers: number[];
  /** The cell errors of these rows. */
  cellErrors: CellError[];
}

/**
 * A spreadsheet being parsed: its header row, then its rows in batches as the worker reads them
 * (`for await`). The worker reads at most a few batches ahead of the consumer, so a slow consumer
 * (the database) keeps memory flat instead of the whole file being held as rows. A file the parser
 * refuses half-way ends the iteration with its {@link SpreadsheetError}. `rowCount` is complete once
 * the iteration has ended; `close()` (also done by leaving the loop early) stops the worker.
 */
export interface SpreadsheetStream extends AsyncIterable<RowBatch> {
  format: SheetFormat;
  headers: string[];
  delimiter?: string;
  sheetName?: string;
  /** Data rows handed on so far. */
  readonly rowCount: number;
  close(): void;
}

/** An option's value: its default when unset, else a positive number (a TypeError otherwise). */
export function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`parseSpreadsheet: ${name} must be a positive number`);
  return value;
}
