import type { ZipEntry } from './zip-inspect';

/**
 * Messages between `parseSpreadsheet` and the parse worker. Plain data only (structured clone);
 * no imports from the workspace packages, the worker loads this file's consumers directly.
 */

export type SheetFormat = 'csv' | 'xlsx';

/** A cell the caller reports as a row error instead of a value. */
export interface CellError {
  /** 1-based row number in the file, as a spreadsheet app shows it (the header row counts). */
  row: number;
  /** The column's original header; the column letter (e.g. `G`) for a value under no header. */
  column: string;
  message: string;
}

export interface WorkerInput {
  format: SheetFormat;
  data: Uint8Array;
  maxRows: number;
  /** Rows per `rows` message; each message is one progress report. */
  batchSize: number;
  /** Row batches the worker may post that the consumer has not taken yet; then it waits. */
  batchesAhead: number;
  /** Flow control shared with the consumer: Int32 words at the `FLOW` indexes. */
  flow: SharedArrayBuffer;
  /** The entries `inspectZip` accepted (XLSX only); the worker verifies their real sizes. */
  zipEntries?: ZipEntry[];
}

/** Int32 word indexes of `WorkerInput.flow`. */
export const FLOW = {
  /** Batches posted and not yet taken by the consumer (the worker adds, the consumer subtracts). */
  ahead: 0,
  /** Milliseconds the worker spent waiting for the consumer (they do not count against its time limit). */
  waitedMs: 1,
  /** 1 while the worker waits for the consumer. */
  waitingNow: 2,
  /** 1 once the consumer is gone: the worker stops waiting. */
  stop: 3,
} as const;

/** `too_large` -> 413, `invalid` -> 400, `unsupported` -> 415. */
export type RejectionReason = 'too_large' | 'invalid' | 'unsupported';

export type WorkerMessage =
  | { type: 'headers'; headers: string[]; delimiter?: string; sheetName?: string }
  /** `rows[i]` holds one value per header, `rowNumbers[i]` its row number in the file. */
  | { type: 'rows'; rows: string[][]; rowNumbers: number[]; cellErrors: CellError[] }
  | { type: 'done' }
  | { type: 'rejected'; reason: RejectionReason; detail: string }
  /** A fault of the parser itself, not of the file. */
  | { type: 'failed'; detail: string };
