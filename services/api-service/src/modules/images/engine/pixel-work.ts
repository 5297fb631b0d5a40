/** Raw RGBA pixels, as sharp's `.ensureAlpha().raw()` gives them. */
export interface Rgba {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Colours of a vectorization, from the optional prompt: few for logos and flat art, many for photos. */
export function coloursFor(prompt: string | undefined): number {
  const text = (prompt ?? '').toLowerCase();
  if (/\b(logo|icon|flat|simple|minimal|line ?art|monochrome|black and white)\b/.test(text)) return 8;
  if (/\b(detailed|photo|photographic|realistic|complex|gradient)\b/.test(text)) return 32;
  return 16;
}

/** A colour SVG of the image (imagetracerjs: colour quantization, layering, path tracing). */
export function vectorize(image: Rgba, colours: number): string {
  // imagetracerjs is a browser-era script without types.
  const tracer = require('imagetracerjs') as {
    imagedataToSVG(data: { width: number; height: number; data: Uint8ClampedArray }, options: object): string;
  };
  const data = new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return tracer.imagedataToSVG(
    { width: image.width, height: image.height, data },
    {
      numberofcolors: colours,
      colorquantcycles: 3,
      pathomit: colours <= 8 ? 12 : 6,
      ltres: 1,
      qtres: 1,
      roundcoords: 1,
      viewbox: true,
      strokewidth: 0,
      linefilter: colours <= 8,
    },
  );
}

/**
 * The alpha channel that removes a plain background: the background colour is estimated from the
 * border, every pixel connected to the border whose colour stays close to it is background
 * (flood fill, 4-connected), and foreground pixels touching it get a soft edge by their distance.
 */
export function backgroundMask(image: Rgba): Uint8Array {
  const { width, height, data } = image;
  const at = (x: number, y: number) => (y * width + x) * 4;
  // The border's median colour and spread.
  const border: number[][] = [];
  for (let x = 0; x < width; x++) for (const y of [0, height - 1]) border.push(pixel(data, at(x, y)));
  for (let y = 1; y < height - 1; y++) for (const x of [0, width - 1]) border.push(pixel(data, at(x, y)));
  const background = [0, 1, 2].map((c) => median(border.map((p) => p[c])));
  const spread = Math.sqrt(border.reduce((sum, p) => sum + distance2(p, background), 0) / border.length);
  const threshold = Math.max(28, Math.min(90, 3 * spread + 12));
  const limit2 = threshold * threshold;

  const isBackground = new Uint8Array(width * height);
  const queue = new Int32Array(width * height);
  let head = 0;
  let tail = 0;
  const visit = (x: number, y: number) => {
    const index = y * width + x;
    if (isBackground[index]) return;
    if (distance2(pixel(data, index * 4), background) > limit2) return;
    isBackground[index] = 1;
    queue[tail++] = index;
  };
  for (let x = 0; x < width; x++) {
    visit(x, 0);
    visit(x, height - 1);
  }
  for (let y = 0; y < height; y++) {
    visit(0, y);
    visit(width - 1, y);
  }
  while (head < tail) {
    const index = queue[head++];
    const x = index % width;
    const y = (index - x) / width;
    if (x > 0) visit(x - 1, y);
    if (x < width - 1) visit(x + 1, y);
    if (y > 0) visit(x, y - 1);
    if (y < height - 1) visit(x, y + 1);
  }

  const alpha = new Uint8Array(width * height);
  for (let index = 0; index < alpha.length; index++) {
    if (isBackground[index]) continue;
    const x = index % width;
    const y = (index - x) / width;
    const edge =
      (x > 0 && isBackground[index - 1]) ||
      (x < width - 1 && isBackground[index + 1]) ||
      (y > 0 && isBackground[index - width]) ||
      (y < height - 1 && isBackground[index + width]);
    if (!edge) {
      alpha[index] = data[index * 4 + 3];
      continue;
    }
    // An edge pixel close to the background colour is mostly background (anti-aliasing).
    const d = Math.sqrt(distance2(pixel(data, index * 4), background));
    alpha[index] = Math.round(
      Math.min(1, Math.max(0.25, (d - threshold / 2) / threshold)) * data[index * 4 + 3],
    );
  }
  return alpha;
}

function pixel(data: Uint8Array, offset: number): number[] {
  return [data[offset], data[offset + 1], data[offset + 2]];
}

function distance2(a: number[], b: number[]): number {
  const dr = a[0] - b[0];
  const dg = a[1] - b[1];
  const db = a[2] - b[2];
  return dr * dr + dg * dg + db * db;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
