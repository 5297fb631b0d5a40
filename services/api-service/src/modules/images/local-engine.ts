import sharp from 'sharp';
import { inWorker } from './engine/launch';
import { coloursFor } from './engine/pixel-work';

/** Largest side traced into SVG: tracing cost grows with the pixels, a logo needs few. */
const MAX_TRACE_SIDE = 1024;

/** The decoded source, refused (400 by the caller) when it is not an image sharp reads. */
export async function decodable(bytes: Buffer, maxPixels: number): Promise<sharp.Metadata> {
  const meta = await sharp(bytes, { limitInputPixels: maxPixels }).metadata();
  if (!meta.width || !meta.height) throw new Error('no image size');
  return meta;
}

async function rgba(bytes: Buffer, maxSide?: number) {
  let pipeline = sharp(bytes).rotate().ensureAlpha();
  if (maxSide) pipeline = pipeline.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true });
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

/** A colour SVG (imagetracerjs in a worker thread); `prompt` guides the number of colours. */
export async function vectorizeImage(bytes: Buffer, prompt?: string): Promise<Buffer> {
  const image = await rgba(bytes, MAX_TRACE_SIDE);
  const { svg } = await inWorker<{ svg: string }>({ kind: 'vectorize', image, colours: coloursFor(prompt) });
  return Buffer.from(svg);
}

/**
 * Largest side the background mask is computed at. The segmentation's memory and time grow with
 * the pixels (a 6000 x 6000 source took 726 MB and 5 s); the mask is then scaled to the source.
 */
const MAX_MASK_SIDE = 2048;

/** A transparent PNG of the subject: the plain background around it made transparent. */
export async function removeBackground(bytes: Buffer): Promise<Buffer> {
  const image = await rgba(bytes, MAX_MASK_SIDE);
  const meta = await sharp(bytes).metadata();
  const width = meta.autoOrient?.width ?? meta.width ?? image.width;
  const height = meta.autoOrient?.height ?? meta.height ?? image.height;
  const { alpha } = await inWorker<{ alpha: Uint8Array }>({ kind: 'mask', image });
  let mask = Buffer.from(alpha.buffer, alpha.byteOffset, alpha.byteLength);
  if (image.width !== width || image.height !== height) {
    mask = await sharp(mask, { raw: { width: image.width, height: image.height, channels: 1 } })
      .resize(width, height, { fit: 'fill' })
      .toColourspace('b-w') // one band out, not sRGB's three
      .raw()
      .toBuffer();
  }
  // The source's colours at full size, its own alpha replaced by the mask, encoded by libvips.
  // flatten, not removeAlpha: sharp removes alpha after joining channels, whatever the call order.
  return sharp(bytes)
    .rotate()
    .flatten()
    .joinChannel(mask, { raw: { width, height, channels: 1 } })
    .png()
    .toBuffer();
}

/** `clarity`: Lanczos-3 resampling to exactly `factor` times the size. */
export async function upscaleClarity(bytes: Buffer, factor: number): Promise<Buffer> {
  const meta = await sharp(bytes).metadata();
  const width = (meta.autoOrient?.width ?? meta.width ?? 0) * factor;
  const height = (meta.autoOrient?.height ?? meta.height ?? 0) * factor;
  return sharp(bytes).rotate().resize(width, height, { kernel: 'lanczos3', fit: 'fill' }).png().toBuffer();
}

/**
 * `generative`: ESRGAN-slim super-resolution by 2, 3 or 4 (a worker thread, TensorFlow.js on
 * WebAssembly); the alpha channel, if any, is resampled with Lanczos-3 and joined back.
 */
export async function upscaleGenerative(bytes: Buffer, factor: number): Promise<Buffer> {
  if (factor === 1) return sharp(bytes).rotate().png().toBuffer();
  const source = sharp(bytes).rotate();
  const meta = await source.metadata();
  const { data, info } = await sharp(bytes)
    .rotate()
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { image } = await inWorker<{ image: { width: number; height: number; data: Uint8Array } }>({
    kind: 'esrgan',
    image: {
      width: info.width,
      height: info.height,
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    },
    scale: factor,
  });
  let out = sharp(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), {
    raw: { width: image.width, height: image.height, channels: 3 },
  });
  if (meta.hasAlpha) {
    const alpha = await sharp(bytes)
      .rotate()
      .extractChannel('alpha')
      .resize(image.width, image.height, { kernel: 'lanczos3', fit: 'fill' })
      .raw()
      .toBuffer();
    out = out.joinChannel(alpha, { raw: { width: image.width, height: image.height, channels: 1 } });
  }
  return out.png().toBuffer();
}

/** The image's most frequent colours after quantization, `#rrggbb`, most frequent first. */
export async function paletteOf(bytes: Buffer, colours = 6): Promise<string[]> {
  const small = await sharp(bytes)
    .rotate()
    .resize(128, 128, { fit: 'inside' })
    .removeAlpha()
    .png({ palette: true, colours })
    .toBuffer();
  const { data } = await sharp(small).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const counts = new Map<string, number>();
  for (let i = 0; i < data.length; i += 3) {
    const hex = `#${[data[i], data[i + 1], data[i + 2]].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
    counts.set(hex, (counts.get(hex) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, colours)
    .map(([hex]) => hex);
}

/**
 * A technical reading of the image from its pixels (the local engine's image analysis): size and
 * format, transparency, palette, brightness and exposure, contrast and sharpness.
 */
export async function analyzeImage(bytes: Buffer, prompt: string): Promise<string> {
  const meta = await sharp(bytes).metadata();
  const stats = await sharp(bytes).rotate().stats();
  const palette = await paletteOf(bytes);
  const [r, g, b] = stats.channels;
  const luminance = 0.2126 * r.mean + 0.7152 * g.mean + 0.0722 * b.mean;
  const contrast = (0.2126 * r.stdev + 0.7152 * g.stdev + 0.0722 * b.stdev) / 255;
  const exposure =
    luminance < 60 ? 'underexposed (dark)' : luminance > 200 ? 'overexposed (bright)' : 'balanced';
  const sharpness = stats.sharpness;
  const sharpWord = sharpness < 0.5 ? 'soft or blurred' : sharpness < 2 ? 'moderately sharp' : 'sharp';
  const transparency = meta.hasAlpha
    ? stats.isOpaque
      ? 'an alpha channel, fully opaque'
      : 'transparent areas'
    : 'no transparency';
  const dominant = `#${[stats.dominant.r, stats.dominant.g, stats.dominant.b].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
  return [
    `Request: ${prompt}`,
    `Image: ${meta.width} x ${meta.height} px, ${meta.format?.toUpperCase() ?? 'unknown format'}, ${meta.channels} channels, ${transparency}.`,
    `Colour: dominant ${dominant}; palette ${palette.join(', ')}.`,
    `Brightness ${Math.round(luminance)}/255, ${exposure}; contrast ${(contrast * 100).toFixed(0)}%; entropy ${stats.entropy.toFixed(2)} bits.`,
    `Detail: sharpness ${sharpness.toFixed(2)} (${sharpWord}).`,
    'Read from the pixels by the local engine: no vision model is configured, so the content is not described.',
  ].join('\n');
}
