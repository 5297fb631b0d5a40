import type { ResourceLimits, Worker } from 'node:worker_threads';
import { startWorker } from '@hwp/platform';

/** Starts the parse worker (parse-worker.ts) with `{ input }` as its workerData. */
export function startParseWorker(
  input: unknown,
  options: { transferList: ArrayBuffer[]; resourceLimits: ResourceLimits },
): Worker {
  return startWorker({ callerFile: __filename, entry: 'parse-worker', workerData: { input }, ...options });
}
