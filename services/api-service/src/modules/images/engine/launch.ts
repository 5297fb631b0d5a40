import { startWorker } from '@hwp/platform';
import type { Rgb } from './esrgan';
import type { Rgba } from './pixel-work';

const TIMEOUT_MS = 300_000;

/** Runs one pixel job (image-worker.ts) in a worker thread; the pixels are moved, not copied. */
export function inWorker<T>(input: {
  kind: 'vectorize' | 'mask' | 'esrgan';
  image: Rgba | Rgb;
  colours?: number;
  scale?: number;
}): Promise<T> {
  const worker = startWorker({
    callerFile: __filename,
    entry: 'image-worker',
    workerData: { input },
    transferList: [input.image.data.buffer as ArrayBuffer],
    resourceLimits: { maxOldGenerationSizeMb: 1024 },
  });
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error('the image job took too long'));
    }, TIMEOUT_MS);
    worker.once('message', (message: T & { error?: string }) => {
      clearTimeout(timer);
      void worker.terminate();
      if (message.error) reject(new Error(message.error));
      else resolve(message);
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
