import { parentPort, workerData } from 'node:worker_threads';
import { backgroundMask, type Rgba, vectorize } from './pixel-work';

/** One job per worker: the CPU-heavy pixel work off the event loop. */
interface Job {
  kind: 'vectorize' | 'mask';
  image: Rgba;
  colours?: number;
}

const { input } = workerData as { input: Job };
try {
  if (input.kind === 'vectorize') {
    parentPort?.postMessage({ svg: vectorize(input.image, input.colours ?? 16) });
  } else {
    const alpha = backgroundMask(input.image);
    parentPort?.postMessage({ alpha }, [alpha.buffer as ArrayBuffer]);
  }
} catch (error) {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
