import { detectFormat, sniff } from './detect-format';
import type { CellError, RejectionReason, SheetFormat, WorkerInput, WorkerMessage } from './parse-protocol';
import { SpreadsheetError, type SpreadsheetErrorCode } from './spreadsheet-error';
import { startParseWorker } from './worker-launcher';
import { DEFAULT_ZIP_LIMITS, inspectZip, type ZipEntry, ZipRejection } from './zip-inspect';

export type { CellError, SheetFormat } from './parse-protocol';
export { SpreadsheetError } from './spreadsheet-error';

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
  /** Aborting terminates the worker and rejects with the signal's reason. */
  signal?: AbortSignal;
}

const MB = 1024 * 1024;
/** Rows per message from the worker. */
const MESSAGE_ROWS = 1_000;

export const SPREADSHEET_DEFAULTS = {
  maxBytes: 50 * MB,
  maxRows: 200_000,
  timeoutMs: 60_000,
  maxMemoryMb: 1024,
  progressEvery: 5_000,
} as const;

const REJECTION_CODES: Record<RejectionReason, SpreadsheetErrorCode> = {
  invalid: 'validation_failed',
  too_large: 'payload_too_large',
  unsupported: 'unsupported_media_type',
};

/**
 * Parses an uploaded CSV or XLSX in a worker thread with memory and time limits (xlsx 0.18.5 has
 * prototype-pollution and ReDoS advisories; the worker contains them and keeps the event loop free).
 * Bad input always ends in a {@link SpreadsheetError} (4xx), never a 500.
 */
export async function parseSpreadsheet(
  input: ParseSpreadsheetInput,
  options: ParseSpreadsheetOptions = {},
): Promise<ParsedSheet> {
  const maxBytes = positive('maxBytes', options.maxBytes, SPREADSHEET_DEFAULTS.maxBytes);
  const { buffer } = input;
  if (buffer.byteLength === 0) throw new SpreadsheetError('validation_failed', 'The file is empty');
  if (buffer.byteLength > maxBytes) {
    throw new SpreadsheetError(
      'payload_too_large',
      `The file is ${megabytes(buffer.byteLength)} MB; the import limit is ${megabytes(maxBytes)} MB`,
    );
  }
  const format = detectFormat(input.filename, input.contentType);
  sniff(format, buffer);

  let zipEntries: ZipEntry[] | undefined;
  if (format === 'xlsx') {
    try {
      zipEntries = inspectZip(buffer, {
        ...DEFAULT_ZIP_LIMITS,
        maxUncompressedBytes: positive(
          'maxUncompressedBytes',
          options.maxUncompressedBytes,
          DEFAULT_ZIP_LIMITS.maxUncompressedBytes,
        ),
        maxCompressionRatio: positive(
          'maxCompressionRatio',
          options.maxCompressionRatio,
          DEFAULT_ZIP_LIMITS.maxCompressionRatio,
        ),
      });
    } catch (error) {
      if (!(error instanceof ZipRejection)) throw error;
      const code = error.reason === 'not_xlsx' ? 'unsupported_media_type' : REJECTION_CODES[error.reason];
      throw new SpreadsheetError(code, error.message);
    }
  }
  return runWorker(format, buffer, zipEntries, options);
}

function runWorker(
  format: SheetFormat,
  buffer: Uint8Array,
  zipEntries: ZipEntry[] | undefined,
  options: ParseSpreadsheetOptions,
): Promise<ParsedSheet> {
  const timeoutMs = positive('timeoutMs', options.timeoutMs, SPREADSHEET_DEFAULTS.timeoutMs);
  const maxMemoryMb = positive('maxMemoryMb', options.maxMemoryMb, SPREADSHEET_DEFAULTS.maxMemoryMb);
  const { signal, onProgress } = options;
  const progressEvery = positive('progressEvery', options.progressEvery, SPREADSHEET_DEFAULTS.progressEvery);
  let reported = 0;
  const report = (final: boolean) => {
    const parsed = sheet.rows.length;
    if (parsed === reported) return;
    if (final || Math.floor(parsed / progressEvery) > Math.floor(reported / progressEvery)) {
      reported = parsed;
      onProgress?.(parsed);
    }
  };
  signal?.throwIfAborted();

  // A private copy is moved (not cloned) to the worker; the caller's buffer stays untouched.
  const data = new Uint8Array(buffer.byteLength);
  data.set(buffer);
  const input: WorkerInput = {
    format,
    data,
    maxRows: positive('maxRows', options.maxRows, SPREADSHEET_DEFAULTS.maxRows),
    // Small batches keep the structured-clone copies in flight small; progress is reported less often.
    batchSize: Math.min(MESSAGE_ROWS, progressEvery),
    zipEntries,
  };
  const sheet: ParsedSheet = { format, headers: [], rows: [], rowNumbers: [], rowCount: 0, cellErrors: [] };

  return new Promise<ParsedSheet>((resolve, reject) => {
    let settled = false;
    const worker = startParseWorker(input, {
      transferList: [data.buffer],
      resourceLimits: {
        maxOldGenerationSizeMb: maxMemoryMb,
        maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.round(maxMemoryMb / 16))),
      },
    });
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (error === undefined) resolve(sheet);
      else reject(error);
    };
    const timer = setTimeout(() => {
      finish(
        new SpreadsheetError(
          'payload_too_large',
          `Parsing the file took longer than ${timeoutMs / 1000} s (the limit); split it into smaller files`,
        ),
      );
    }, timeoutMs);
    const onAbort = () => finish(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });

    worker.on('message', (message: WorkerMessage) => {
      if (settled) return;
      try {
        if (receive(sheet, message)) {
          report(message.type === 'done');
          if (message.type === 'done') finish();
        }
      } catch (error) {
        finish(error);
      }
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code !== 'ERR_WORKER_OUT_OF_MEMORY') return finish(error);
      finish(
        new SpreadsheetError(
          'payload_too_large',
          `Parsing the file needs more than ${maxMemoryMb} MB of memory (the limit); split it into smaller files`,
          { cause: error },
        ),
      );
    });
    worker.on('exit', (code) =>
      finish(new Error(`The spreadsheet parse worker exited early (code ${code})`)),
    );
  });
}

/** Applies one worker message; true when the caller should report progress (`rows`) or settle (`done`). */
function receive(sheet: ParsedSheet, message: WorkerMessage): boolean {
  switch (message.type) {
    case 'headers':
      sheet.headers = message.headers;
      if (message.delimiter !== undefined) sheet.delimiter = message.delimiter;
      if (message.sheetName !== undefined) sheet.sheetName = message.sheetName;
      return false;
    case 'rows':
      for (const values of message.rows) {
        while (values.length < sheet.headers.length) values.push('');
        sheet.rows.push(values);
      }
      for (const rowNumber of message.rowNumbers) sheet.rowNumbers.push(rowNumber);
      for (const cellError of message.cellErrors) sheet.cellErrors.push(cellError);
      sheet.rowCount = sheet.rows.length;
      return true;
    case 'done':
      return true;
    case 'rejected':
      throw new SpreadsheetError(REJECTION_CODES[message.reason], message.detail);
    case 'failed':
      throw new Error(`The spreadsheet parser failed: ${message.detail}`);
  }
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`parseSpreadsheet: ${name} must be a positive number`);
  return value;
}

function megabytes(bytes: number): string {
  return (bytes / MB).toFixed(bytes % MB === 0 ? 0 : 1);
}
