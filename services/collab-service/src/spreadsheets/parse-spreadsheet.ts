import type { Worker } from 'node:worker_threads';
import { detectFormat, sniff } from './detect-format';
import {
  type CellError,
  FLOW,
  type RejectionReason,
  type SheetFormat,
  type WorkerInput,
  type WorkerMessage,
} from './parse-protocol';
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
  /**
   * The caller gives the buffer up: its memory moves to the worker without a copy (the buffer is
   * empty afterwards). Without it the worker parses a copy.
   */
  handOver?: boolean;
  /** Aborting terminates the worker and rejects with the signal's reason. */
  signal?: AbortSignal;
}

const MB = 1024 * 1024;
/**
 * Rows per message from the worker. Small: rows waiting in the queue when the garbage collector
 * runs outlive it and are moved to the old generation, which only a full collection frees.
 */
const MESSAGE_ROWS = 250;

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

/**
 * Parses an uploaded CSV or XLSX in a worker thread with memory and time limits (xlsx 0.18.5 has
 * prototype-pollution and ReDoS advisories; the worker contains them and keeps the event loop free).
 * Bad input always ends in a {@link SpreadsheetError} (4xx), never a 500.
 */
export async function parseSpreadsheet(
  input: ParseSpreadsheetInput,
  options: ParseSpreadsheetOptions = {},
): Promise<ParsedSheet> {
  const stream = await openSpreadsheet(input, options);
  const { format, headers, delimiter, sheetName } = stream;
  const sheet: ParsedSheet = { format, headers, rows: [], rowNumbers: [], rowCount: 0, cellErrors: [] };
  if (delimiter !== undefined) sheet.delimiter = delimiter;
  if (sheetName !== undefined) sheet.sheetName = sheetName;
  for await (const batch of stream) {
    for (const values of batch.rows) sheet.rows.push(values);
    for (const rowNumber of batch.rowNumbers) sheet.rowNumbers.push(rowNumber);
    for (const cellError of batch.cellErrors) sheet.cellErrors.push(cellError);
  }
  sheet.rowCount = sheet.rows.length;
  return sheet;
}

/**
 * Starts parsing an uploaded CSV or XLSX (see {@link parseSpreadsheet}); resolves once the header
 * row is read. Size, format and ZIP checks happen before the worker starts.
 */
export async function openSpreadsheet(
  input: ParseSpreadsheetInput,
  options: ParseSpreadsheetOptions = {},
): Promise<SpreadsheetStream> {
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
  const stream = new WorkerSheet(format, buffer, zipEntries, options);
  await stream.opened;
  return stream;
}

/** Batches the worker may post before it waits for the consumer to take one. */
const BATCHES_AHEAD = 2;

class WorkerSheet implements SpreadsheetStream {
  headers: string[] = [];
  delimiter?: string;
  sheetName?: string;
  rowCount = 0;
  /** Settles once the header row has come (or the parse failed before it). */
  readonly opened: Promise<void>;

  private readonly worker: Worker;
  private readonly flow = new Int32Array(new SharedArrayBuffer(Object.keys(FLOW).length * 4));
  private readonly queue: RowBatch[] = [];
  private ended = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private headed!: (error?: unknown) => void;
  private timer: NodeJS.Timeout | undefined;
  /** Time the limit's timer has measured so far (the sum of the delays it waited). */
  private timed = 0;
  private readonly timeoutMs: number;
  private readonly maxMemoryMb: number;
  private readonly progressEvery: number;
  private reported = 0;

  constructor(
    readonly format: SheetFormat,
    buffer: Uint8Array,
    zipEntries: ZipEntry[] | undefined,
    private readonly options: ParseSpreadsheetOptions,
  ) {
    this.timeoutMs = positive('timeoutMs', options.timeoutMs, SPREADSHEET_DEFAULTS.timeoutMs);
    this.maxMemoryMb = positive('maxMemoryMb', options.maxMemoryMb, SPREADSHEET_DEFAULTS.maxMemoryMb);
    this.progressEvery = positive('progressEvery', options.progressEvery, SPREADSHEET_DEFAULTS.progressEvery);
    options.signal?.throwIfAborted();
    this.opened = new Promise<void>((resolve, reject) => {
      this.headed = (error) => (error === undefined ? resolve() : reject(error));
    });

    // Moved (not cloned) to the worker: the caller's own memory when it hands the buffer over and
    // the buffer has its memory to itself, else a private copy (the caller's buffer stays untouched).
    const whole =
      buffer.buffer instanceof ArrayBuffer &&
      buffer.byteOffset === 0 &&
      buffer.byteLength === buffer.buffer.byteLength;
    const data = options.handOver && whole ? new Uint8Array(buffer.buffer) : new Uint8Array(buffer);
    const input: WorkerInput = {
      format,
      data,
      maxRows: positive('maxRows', options.maxRows, SPREADSHEET_DEFAULTS.maxRows),
      // Small batches keep the structured-clone copies in flight small; progress is reported less often.
      batchSize: Math.min(MESSAGE_ROWS, this.progressEvery),
      batchesAhead: BATCHES_AHEAD,
      flow: this.flow.buffer as SharedArrayBuffer,
      zipEntries,
    };
    this.worker = startParseWorker(input, {
      transferList: [data.buffer],
      resourceLimits: {
        maxOldGenerationSizeMb: this.maxMemoryMb,
        maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.round(this.maxMemoryMb / 16))),
      },
    });
    this.arm(this.timeoutMs);
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.worker.on('message', (message: WorkerMessage) => {
      if (this.ended) return;
      try {
        this.receive(message);
      } catch (error) {
        this.finish(error);
      }
    });
    this.worker.on('error', (error: Error & { code?: string }) => {
      if (error.code !== 'ERR_WORKER_OUT_OF_MEMORY') return this.finish(error);
      this.finish(
        new SpreadsheetError(
          'payload_too_large',
          `Parsing the file needs more than ${this.maxMemoryMb} MB of memory (the limit); split it into smaller files`,
          { cause: error },
        ),
      );
    });
    this.worker.on('exit', (code) =>
      this.finish(new Error(`The spreadsheet parse worker exited early (code ${code})`)),
    );
  }

  private readonly onAbort = () => this.finish(this.options.signal?.reason);

  /**
   * The time limit counts the worker's own work: time it spent waiting for the consumer to take
   * batches is added back, and a worker that is waiting right now is never stopped for time.
   */
  private arm(delay: number): void {
    this.timer = setTimeout(() => {
      this.timed += delay;
      this.watch();
    }, delay);
  }

  private watch(): void {
    const waiting = Atomics.load(this.flow, FLOW.waitingNow) === 1;
    const worked = this.timed - Atomics.load(this.flow, FLOW.waitedMs);
    if (!waiting && worked >= this.timeoutMs) {
      this.finish(
        new SpreadsheetError(
          'payload_too_large',
          `Parsing the file took longer than ${this.timeoutMs / 1000} s (the limit); split it into smaller files`,
        ),
      );
      return;
    }
    this.arm(Math.max(100, this.timeoutMs - worked));
  }

  private receive(message: WorkerMessage): void {
    switch (message.type) {
      case 'headers':
        this.headers = message.headers;
        if (message.delimiter !== undefined) this.delimiter = message.delimiter;
        if (message.sheetName !== undefined) this.sheetName = message.sheetName;
        this.headed();
        return;
      case 'rows':
        for (const values of message.rows) {
          while (values.length < this.headers.length) values.push('');
        }
        this.queue.push({
          rows: message.rows,
          rowNumbers: message.rowNumbers,
          cellErrors: message.cellErrors,
        });
        this.wake?.();
        return;
      case 'done':
        this.finish();
        return;
      case 'rejected':
        throw new SpreadsheetError(REJECTION_CODES[message.reason], message.detail);
      case 'failed':
        throw new Error(`The spreadsheet parser failed: ${message.detail}`);
    }
  }

  /** Ends the parse: every row has come (no error) or it failed; the worker is stopped either way. */
  private finish(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (error !== undefined) this.failure = { error };
    clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    Atomics.store(this.flow, FLOW.stop, 1);
    Atomics.notify(this.flow, FLOW.ahead);
    void this.worker.terminate();
    this.headed(error ?? new Error('The spreadsheet parse worker ended before the header row'));
    this.wake?.();
  }

  close(): void {
    this.queue.length = 0;
    this.finish();
  }

  private report(final: boolean): void {
    const parsed = this.rowCount;
    if (parsed === this.reported) return;
    if (final || Math.floor(parsed / this.progressEvery) > Math.floor(this.reported / this.progressEvery)) {
      this.reported = parsed;
      this.options.onProgress?.(parsed);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RowBatch> {
    try {
      for (;;) {
        const batch = this.queue.shift();
        if (batch) {
          // The worker may read one more batch ahead.
          Atomics.sub(this.flow, FLOW.ahead, 1);
          Atomics.notify(this.flow, FLOW.ahead);
          this.rowCount += batch.rows.length;
          this.report(false);
          yield batch;
          continue;
        }
        if (this.failure) throw this.failure.error;
        if (this.ended) break;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
      }
      this.report(true);
    } finally {
      // Leaving the loop early (an error of the consumer) stops the worker.
      this.close();
    }
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
