import type { Worker } from 'node:worker_threads';
import {
  FLOW,
  type RejectionReason,
  type SheetFormat,
  type WorkerInput,
  type WorkerMessage,
} from './parse-protocol';
import {
  type ParseSpreadsheetOptions,
  positive,
  type RowBatch,
  SPREADSHEET_DEFAULTS,
  type SpreadsheetStream,
} from './sheet-types';
import { SpreadsheetError, type SpreadsheetErrorCode } from './spreadsheet-error';
import { startParseWorker } from './worker-launcher';
import type { ZipEntry } from './zip-inspect';

/**
 * Rows per message from the worker. Small: rows waiting in the queue when the garbage collector
 * runs outlive it and are moved to the old generation, which only a full collection frees.
 */
const MESSAGE_ROWS = 250;

/** The SpreadsheetError code of each way the parser refuses a file. */
export const REJECTION_CODES: Record<RejectionReason, SpreadsheetErrorCode> = {
  invalid: 'validation_failed',
  too_large: 'payload_too_large',
  unsupported: 'unsupported_media_type',
};

/** Batches the worker may post before it waits for the consumer to take one. */
const BATCHES_AHEAD = 2;

/** A sheet parsed by a worker thread, under the limits of its options (see openSpreadsheet). */
export class WorkerSheet implements SpreadsheetStream {
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
