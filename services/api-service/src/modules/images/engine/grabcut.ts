import type { Rgba } from './pixel-work';

/** Largest image refined (pixels); bigger ones keep the flood fill's mask. */
const MAX_PIXELS = 1_500_000;
/** Width of the band around the flood fill's edge that GrabCut may move (pixels). */
const BAND = 4;

// biome-ignore lint/suspicious/noExplicitAny: opencv.js ships without types for its API
type Cv = any;
let loading: Promise<{ cv: Cv }> | undefined;

/**
 * OpenCV compiled to WebAssembly (opencv.js), ready once its runtime initialised. The module is a
 * thenable that resolves to itself, so it is handed over wrapped (awaiting it would never end).
 */
function opencv(): Promise<{ cv: Cv }> {
  loading ??= new Promise((resolve) => {
    const cv = require('@techstark/opencv-js') as Cv;
    if (cv.Mat) resolve({ cv });
    else cv.onRuntimeInitialized = () => resolve({ cv });
  });
  return loading;
}

/**
 * Refines the flood fill's alpha with GrabCut: background pixels away from the subject and subject
 * pixels away from the edge are fixed, the band between is left to GrabCut's colour models, and
 * subject pixels it finds to be background (holes of background colour inside the outline, halos)
 * become transparent. The soft edge of the flood fill is kept where both agree.
 */
export async function refineWithGrabCut(image: Rgba, alpha: Uint8Array): Promise<Uint8Array> {
  const { width, height, data } = image;
  if (width * height > MAX_PIXELS || width < 8 || height < 8) return alpha;
  const { cv } = await opencv();
  // Distance of each pixel to the other side of the flood fill's edge, up to BAND.
  const near = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const index = y * width + x;
      const inside = alpha[index] > 0;
      for (let d = 1; d <= BAND && !near[index]; d++) {
        for (const [dx, dy] of [
          [d, 0],
          [-d, 0],
          [0, d],
          [0, -d],
        ]) {
          const nx = x + dx;
          const ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
          if (alpha[ny * width + nx] > 0 !== inside) {
            near[index] = 1;
            break;
          }
        }
      }
    }
  }
  const rgb = new cv.Mat(height, width, cv.CV_8UC3);
  const mask = new cv.Mat(height, width, cv.CV_8UC1);
  const background = new cv.Mat();
  const foreground = new cv.Mat();
  try {
    for (let i = 0; i < width * height; i++) {
      rgb.data[i * 3] = data[i * 4];
      rgb.data[i * 3 + 1] = data[i * 4 + 1];
      rgb.data[i * 3 + 2] = data[i * 4 + 2];
      const inside = alpha[i] > 0;
      mask.data[i] = near[i] ? (inside ? cv.GC_PR_FGD : cv.GC_PR_BGD) : inside ? cv.GC_PR_FGD : cv.GC_BGD;
    }
    // The subject away from the edge is sure foreground, except pixels of the background's colour
    // (a hole the outline encloses): those are left to GrabCut as probable background.
    const border: number[] = [];
    for (let x = 0; x < width; x++) border.push(x, (height - 1) * width + x);
    for (let y = 0; y < height; y++) border.push(y * width, y * width + width - 1);
    const median = (channel: number) => {
      const values = border.map((i) => data[i * 4 + channel]).sort((a, b) => a - b);
      return values[values.length >> 1];
    };
    const [br, bg, bb] = [median(0), median(1), median(2)];
    let sure = 0;
    for (let i = 0; i < width * height; i++) {
      if (alpha[i] === 0 || near[i]) continue;
      const dr = data[i * 4] - br;
      const dg = data[i * 4 + 1] - bg;
      const db = data[i * 4 + 2] - bb;
      if (dr * dr + dg * dg + db * db < 40 * 40) mask.data[i] = cv.GC_PR_BGD;
      else {
        mask.data[i] = cv.GC_FGD;
        sure++;
      }
    }
    if (sure === 0) return alpha;
    cv.grabCut(rgb, mask, new cv.Rect(0, 0, width, height), background, foreground, 3, cv.GC_INIT_WITH_MASK);
    const refined = new Uint8Array(alpha);
    for (let i = 0; i < width * height; i++) {
      const keep = mask.data[i] === cv.GC_FGD || mask.data[i] === cv.GC_PR_FGD;
      if (!keep) refined[i] = 0;
      else if (refined[i] === 0) refined[i] = data[i * 4 + 3];
    }
    return refined;
  } finally {
    rgb.delete();
    mask.delete();
    background.delete();
    foreground.delete();
  }
}
