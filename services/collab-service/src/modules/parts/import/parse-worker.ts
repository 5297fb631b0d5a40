import { parentPort, workerData } from 'node:worker_threads';
import type { WorkerInput, WorkerMessage } from './parse-protocol';
import { Rejection, RowCollector } from './row-collector';
import { readCsv, readXlsx } from './sheet-readers';
import { verifyZipEntries, ZipRejection } from './zip-inspect';

/**
 * Entry of the parse worker thread started by `parseSpreadsheet` (see worker-launcher.ts). It
 * reads `workerData.input`, posts `WorkerMessage`s and ends; the parent enforces memory and time.
 */

async function run(input: WorkerInput, post: (message: WorkerMessage) => void): Promise<void> {
  const collector = (describe: { delimiter?: string; sheetName?: string }) =>
    new RowCollector(input.maxRows, input.batchSize, post, describe);
  try {
    if (input.format === 'csv') {
      readCsv(input.data, collector);
    } else {
      await verifyZipEntries(input.data, input.zipEntries ?? []);
      readXlsx(input.data, collector);
    }
    post({ type: 'done' });
  } catch (error) {
    post(report(error));
  }
}

function report(error: unknown): WorkerMessage {
  if (error instanceof Rejection) return { type: 'rejected', reason: error.reason, detail: error.message };
  if (error instanceof ZipRejection) {
    const reason = error.reason === 'not_xlsx' ? 'unsupported' : error.reason;
    return { type: 'rejected', reason, detail: error.message };
  }
  // Strings or arrays past V8's limits ("Invalid string length") come from the size of the input.
  if (error instanceof RangeError) {
    return { type: 'rejected', reason: 'too_large', detail: 'The file is too large to parse' };
  }
  return { type: 'failed', detail: error instanceof Error ? error.message : String(error) };
}

if (parentPort) {
  const port = parentPort;
  void run((workerData as { input: WorkerInput }).input, (message) => port.postMessage(message));
}
