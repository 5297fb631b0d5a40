import { parentPort, workerData } from 'node:worker_threads';
import { esrganUpscale, type Rgb } from './esrgan';
import { refineWithGrabCut } from './grabcut';
import { backgroundMask, type Rgba, vectorize } from './pixel-work';

/** One job per worker: the CPU-heavy pixel work off the event loop. */
interface Job {
  kind: 'vectorize' | 'mask' | 'esrgan';
  image: Rgba | Rgb;
  colours?: number;
  scale?: number;
}

async function run(input: Job): Promise<void> {
  if (input.kind === 'vectorize') {
    parentPort?.postMessage({ svg: vectorize(input.image, input.colours ?? 16) });
  } else if (input.kind === 'esrgan') {
    const image = await esrganUpscale(input.image, input.scale ?? 2);
    parentPort?.postMessage({ image }, [image.data.buffer as ArrayBuffer]);
  } else {
    const image = input.image as Rgba;
    const alpha = await refineWithGrabCut(image, backgroundMask(image));
    parentPort?.postMessage({ alpha }, [alpha.buffer as ArrayBuffer]);
  }
}

const { input } = workerData as { input: Job };
run(input).catch((error: unknown) => {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
});
