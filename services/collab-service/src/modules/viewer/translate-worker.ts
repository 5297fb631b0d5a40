import { parentPort, workerData } from 'node:worker_threads';
import { MeshParseError, type ModelFormat, type TranslateOptions, translateModel } from '@hwp/geometry';

/** Entry of a translation's worker thread: `workerData.data` in, progress and then the GLB (or the reason) out. */
export interface TranslateInput {
  data: Uint8Array;
  format: ModelFormat;
  options: TranslateOptions;
  name: string;
}

export type TranslateMessage =
  | { type: 'progress'; stage: string; progress: number }
  | {
      type: 'done';
      glb: Uint8Array;
      meshes: number;
      vertices: number;
      triangles: number;
      bounds: { min: number[]; max: number[] };
    }
  | { type: 'failed'; reason: string };

async function run(port: NonNullable<typeof parentPort>): Promise<void> {
  const input = workerData as TranslateInput;
  const post = (message: TranslateMessage, transfer: ArrayBuffer[] = []) =>
    port.postMessage(message, transfer);
  try {
    const model = await translateModel(
      input.data,
      input.format,
      input.options,
      (stage, progress) => post({ type: 'progress', stage, progress }),
      input.name,
    );
    post({ type: 'done', ...model }, [model.glb.buffer as ArrayBuffer]);
  } catch (error) {
    // A file that cannot be read is the file's fault: that is the reason. Anything else is ours.
    const reason =
      error instanceof MeshParseError ? error.message : `translation failed: ${(error as Error).message}`;
    post({ type: 'failed', reason });
  }
}

if (parentPort) void run(parentPort);
