import { parentPort, workerData } from 'node:worker_threads';
import { FLOW, type WorkerInput, type WorkerMessage } from './parse-protocol';
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

/**
 * Posts a batch of rows, then waits (blocking this thread, which has nothing else to do) while the
 * consumer has `batchesAhead` batches it has not taken yet.
 */
function throttled(input: WorkerInput, post: (message: WorkerMessage) => void) {
  const flow = new Int32Array(input.flow);
  return (message: WorkerMessage) => {
    post(message);
    if (message.type !== 'rows') return;
    Atomics.add(flow, FLOW.ahead, 1);
    let ahead = Atomics.load(flow, FLOW.ahead);
    if (ahead < input.batchesAhead) return;
    const started = Date.now();
    Atomics.store(flow, FLOW.waitingNow, 1);
    while (ahead >= input.batchesAhead && Atomics.load(flow, FLOW.stop) === 0) {
      Atomics.wait(flow, FLOW.ahead, ahead, 1_000);
      ahead = Atomics.load(flow, FLOW.ahead);
    }
    Atomics.add(flow, FLOW.waitedMs, Date.now() - started);
    Atomics.store(flow, FLOW.waitingNow, 0);
  };
}

if (parentPort) {
  const port = parentPort;
  const input = (workerData as { input: WorkerInput }).input;
  void run(
    input,
    throttled(input, (message) => port.postMessage(message)),
  );
}
