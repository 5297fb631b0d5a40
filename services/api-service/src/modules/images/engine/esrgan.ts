import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Raw RGB pixels (3 channels). */
export interface Rgb {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Tile side fed to the model, and the margin of context around each tile (cropped after). */
const TILE = 128;
const PAD = 8;

type Tf = typeof import('@tensorflow/tfjs-core');
type LayersModel = import('@tensorflow/tfjs-layers').LayersModel;

let ready: Promise<Tf> | undefined;

/** TensorFlow.js on its WebAssembly backend (no native binaries, runs offline). */
function tensorflow(): Promise<Tf> {
  ready ??= (async () => {
    const tf = require('@tensorflow/tfjs-core') as Tf;
    require('@tensorflow/tfjs-layers');
    const wasm = require('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm');
    wasm.setWasmPaths(`${path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm'))}${path.sep}`);
    await tf.setBackend('wasm');
    await tf.ready();
    return tf;
  })();
  return ready;
}

/** The ESRGAN-slim generator for `scale` (2, 3 or 4), weights read from the package's files. */
async function model(tf: Tf, scale: number): Promise<LayersModel> {
  const layers = require('@tensorflow/tfjs-layers') as typeof import('@tensorflow/tfjs-layers');
  // The package's exports map hides its files; its folder is found through a file it exports.
  const packageDir = path.join(
    require.resolve('@upscalerjs/esrgan-slim').split(`${path.sep}dist${path.sep}`)[0],
  );
  const dir = path.join(packageDir, 'models', `x${scale}`);
  const json = JSON.parse(readFileSync(path.join(dir, 'model.json'), 'utf8')) as {
    modelTopology: object;
    weightsManifest: {
      paths: string[];
      weights: import('@tensorflow/tfjs-core').io.WeightsManifestEntry[];
    }[];
  };
  const weights = Buffer.concat(
    json.weightsManifest.flatMap((g) => g.paths.map((p) => readFileSync(path.join(dir, p)))),
  );
  return layers.loadLayersModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
      weightData: weights.buffer.slice(
        weights.byteOffset,
        weights.byteOffset + weights.byteLength,
      ) as ArrayBuffer,
    }),
  );
}

/**
 * Super-resolution by `scale` with ESRGAN-slim (RDN, trained on DIV2K), tile by tile so memory stays
 * bounded for big images: each tile is predicted with `PAD` pixels of its surroundings, which are
 * cropped from the output so the seams do not show.
 */
export async function esrganUpscale(image: Rgb, scale: number): Promise<Rgb> {
  const tf = await tensorflow();
  const generator = await model(tf, scale);
  const { width, height, data } = image;
  const out = new Uint8Array(width * scale * height * scale * 3);
  for (let y0 = 0; y0 < height; y0 += TILE) {
    for (let x0 = 0; x0 < width; x0 += TILE) {
      const x1 = Math.min(width, x0 + TILE);
      const y1 = Math.min(height, y0 + TILE);
      const px0 = Math.max(0, x0 - PAD);
      const py0 = Math.max(0, y0 - PAD);
      const px1 = Math.min(width, x1 + PAD);
      const py1 = Math.min(height, y1 + PAD);
      const tw = px1 - px0;
      const th = py1 - py0;
      const tile = new Float32Array(tw * th * 3);
      for (let y = 0; y < th; y++) {
        for (let x = 0; x < tw * 3; x++) tile[y * tw * 3 + x] = data[((py0 + y) * width + px0) * 3 + x];
      }
      const predicted = tf.tidy(() => {
        const input = tf.tensor4d(tile, [1, th, tw, 3]);
        return tf.clipByValue(generator.predict(input) as import('@tensorflow/tfjs-core').Tensor, 0, 255);
      });
      const values = await predicted.data();
      predicted.dispose();
      // Copy the tile's own pixels (without the padding) into place.
      const ow = tw * scale;
      for (let y = (y0 - py0) * scale; y < (y1 - py0) * scale; y++) {
        const outY = py0 * scale + y;
        for (let x = (x0 - px0) * scale; x < (x1 - px0) * scale; x++) {
          const outX = px0 * scale + x;
          const from = (y * ow + x) * 3;
          const to = (outY * width * scale + outX) * 3;
          out[to] = Math.round(values[from]);
          out[to + 1] = Math.round(values[from + 1]);
          out[to + 2] = Math.round(values[from + 2]);
        }
      }
    }
  }
  generator.dispose();
  return { width: width * scale, height: height * scale, data: out };
}
