import type { Readable } from 'node:stream';
import type { FileClassification, FileMetadata } from '@hwp/contracts';
import { type BlobStore, startWorker } from '@hwp/platform';
import sharp from 'sharp';
import type { ClamdClient } from '../clamd';
import type { FileRevisionEntity } from '../file.entity';
import { extensionOf } from '../file-names';
import type { ContentFacts } from './content';
import { classify, contradicts, type Detected, detect } from './sniff';

const HEAD_BYTES = 64 * 1024;
/** The EICAR test file, put together here so this source is not itself flagged. */
const EICAR = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');
/** The analysis of one file: wall-clock time and heap of its worker (past either: `failed`). */
const WORKER_TIMEOUT_MS = 60_000;
const WORKER_HEAP_MB = 512;
/**
 * OpenCascade's WebAssembly memory (STEP, IGES), which the heap limit does not count: capped here
 * (it may grow to 2 GB). A 10 MB STEP file of 2,000 solids needs about 900 MB.
 */
const WORKER_WASM_MB = 1024;
const IMAGE_FORMATS: Detected[] = ['png', 'jpeg', 'gif', 'webp', 'tiff'];

export interface ScanResult {
  verdict: 'clean' | 'infected' | 'mismatch';
  signature?: string;
  engines: string[];
  detected: Detected | null;
}

export interface ContentAnalysis {
  metadata: FileMetadata;
  classification: FileClassification;
  text?: string;
  previews?: { preview: Buffer; thumbnail: Buffer };
  /** Why the file is refused (over a work budget, the worker's time or memory): it ends `failed`. */
  rejected?: string;
}

/**
 * Whether the stream holds `needle` anywhere, across chunk boundaries, holding one chunk and the
 * needle's length at a time (the built-in check reads the whole file, not its ends only).
 */
export async function streamContains(body: Readable, needle: string): Promise<boolean> {
  let tail: Buffer = Buffer.alloc(0);
  for await (const chunk of body) {
    const bytes: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    const window: Buffer = tail.length ? Buffer.concat([tail, bytes]) : bytes;
    if (window.includes(needle)) {
      body.destroy();
      return true;
    }
    tail = Buffer.from(window.subarray(Math.max(0, window.length - needle.length + 1)));
  }
  return false;
}

/** The whole body of a stream (callers bound its size beforehand). */
export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

async function range(
  blobs: BlobStore,
  revision: FileRevisionEntity,
  start: number,
  end: number,
): Promise<Buffer> {
  if (revision.size === 0 || start > end) return Buffer.alloc(0);
  return readAll((await blobs.get(revision.blobKey, { start, end })).body);
}

const head = (blobs: BlobStore, revision: FileRevisionEntity) =>
  range(blobs, revision, 0, Math.min(HEAD_BYTES, revision.size) - 1);

/**
 * The scan stage: the built-in checks (the EICAR test string in the first or last 64 KiB, content
 * that contradicts its extension), then clamd over the whole content when configured. A clamd that
 * cannot be reached throws (the message is retried): nothing is called clean without it.
 */
export async function scanContent(
  blobs: BlobStore,
  revision: FileRevisionEntity,
  clamd?: ClamdClient,
): Promise<ScanResult> {
  const first = await head(blobs, revision);
  const last =
    revision.size > HEAD_BYTES
      ? await range(blobs, revision, revision.size - HEAD_BYTES, revision.size - 1)
      : first;
  const detected = detect(first);
  const engines = ['builtin'];
  const eicar =
    first.includes(EICAR) ||
    last.includes(EICAR) ||
    (revision.size > 2 * HEAD_BYTES &&
      (await streamContains((await blobs.get(revision.blobKey)).body, EICAR)));
  if (eicar) {
    return { verdict: 'infected', signature: 'Eicar-Test-Signature (builtin)', engines, detected };
  }
  if (contradicts(detected, extensionOf(revision.name))) {
    return { verdict: 'mismatch', signature: `Heuristics.ExtensionMismatch.${detected}`, engines, detected };
  }
  if (clamd) {
    engines.push('clamd');
    const verdict = await clamd.scan((await blobs.get(revision.blobKey)).body);
    if (verdict.infected) return { verdict: 'infected', signature: verdict.signature, engines, detected };
  }
  return { verdict: 'clean', engines, detected };
}

const UNKNOWN: FileMetadata = { dimensions: null, components: null, software: null, custom_properties: {} };

/** Parses in a worker thread (memory and time limited); a worker that fails leaves the facts unknown. */
function analyzeInWorker(
  data: Buffer,
  extension: string,
  detected: Detected | null,
  render: boolean,
): Promise<ContentFacts> {
  const copy = new Uint8Array(data.byteLength);
  copy.set(data);
  return new Promise((resolve) => {
    const worker = startWorker({
      callerFile: __filename,
      entry: 'analyze-worker',
      extraDirs: ['../render'],
      workerData: { data: copy, extension, detected, render, wasmMb: WORKER_WASM_MB },
      transferList: [copy.buffer as ArrayBuffer],
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ metadata: UNKNOWN, rejected: `The analysis took longer than ${WORKER_TIMEOUT_MS / 1000} s` });
    }, WORKER_TIMEOUT_MS);
    worker.once('message', (facts: ContentFacts) => {
      clearTimeout(timer);
      resolve(facts);
      void worker.terminate();
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      resolve(
        outOfMemory
          ? { metadata: UNKNOWN, rejected: `The analysis needed more than ${WORKER_HEAP_MB} MB of memory` }
          : { metadata: UNKNOWN, error: error.message },
      );
    });
  });
}

const png = (image: { width: number; height: number; pixels: Uint8Array }) =>
  sharp(Buffer.from(image.pixels.buffer, image.pixels.byteOffset, image.pixels.byteLength), {
    raw: { width: image.width, height: image.height, channels: 3 },
  })
    .png()
    .toBuffer();

/** A drawing's SVG rasterised by sharp (librsvg; the SVG is ours, made from the DXF's entities). */
async function drawingPreviews(svg: string): Promise<ContentAnalysis['previews']> {
  try {
    const rendered = (size: number) =>
      sharp(Buffer.from(svg))
        .flatten({ background: '#ffffff' })
        .resize(size, size, { fit: 'inside' })
        .png()
        .toBuffer();
    return { preview: await rendered(512), thumbnail: await rendered(128) };
  } catch {
    return undefined;
  }
}

const IMAGE_LIMITS = { limitInputPixels: 268_402_689 };

/** The preview and thumbnail of an image (oriented by its EXIF, never enlarged). */
async function imagePreviews(data: Buffer): Promise<NonNullable<ContentAnalysis['previews']>> {
  const resized = (size: number) =>
    sharp(data, IMAGE_LIMITS)
      .rotate()
      .resize(size, size, { fit: 'inside', withoutEnlargement: true })
      .png()
      .toBuffer();
  return { preview: await resized(512), thumbnail: await resized(128) };
}

/** Metadata and previews of an image, through sharp (libvips); pixel limits keep bombs out. */
async function analyzeImage(
  data: Buffer,
  render: boolean,
): Promise<Pick<ContentAnalysis, 'metadata' | 'previews'>> {
  try {
    const info = await sharp(data, IMAGE_LIMITS).metadata();
    const metadata: FileMetadata = {
      dimensions: { width: info.width ?? null, height: info.height ?? null, depth: null, units: 'px' },
      components: null,
      software: null,
      custom_properties: {
        format: info.format,
        channels: info.channels,
        space: info.space,
        has_alpha: info.hasAlpha,
      },
    };
    return render ? { metadata, previews: await imagePreviews(data) } : { metadata };
  } catch (error) {
    return {
      metadata: {
        ...UNKNOWN,
        custom_properties: { error: error instanceof Error ? error.message : String(error) },
      },
    };
  }
}

/** The metadata, preview and classification stages' work, from one read of the content. */
export async function analyzeContent(
  blobs: BlobStore,
  revision: FileRevisionEntity,
  options: { maxBytes: number; renderPreview: boolean },
): Promise<ContentAnalysis> {
  const extension = extensionOf(revision.name);
  const detected = detect(await head(blobs, revision));
  const classification = classify(detected, extension);
  if (revision.size > options.maxBytes) {
    return {
      metadata: { ...UNKNOWN, custom_properties: { skipped: 'larger than PROCESSING_MAX_MB' } },
      classification,
    };
  }
  const data =
    revision.size === 0 ? Buffer.alloc(0) : await readAll((await blobs.get(revision.blobKey)).body);
  if (detected && IMAGE_FORMATS.includes(detected))
    return { ...(await analyzeImage(data, options.renderPreview)), classification };
  const facts = await analyzeInWorker(data, extension, detected, options.renderPreview);
  if (facts.rejected) return { metadata: facts.metadata, classification, rejected: facts.rejected };
  const metadata = facts.error
    ? { ...facts.metadata, custom_properties: { ...facts.metadata.custom_properties, error: facts.error } }
    : facts.metadata;
  const previews = facts.image
    ? await imagePreviews(Buffer.from(facts.image)).catch(() => undefined)
    : facts.renders
      ? { preview: await png(facts.renders.preview), thumbnail: await png(facts.renders.thumbnail) }
      : facts.svg
        ? await drawingPreviews(facts.svg)
        : undefined;
  return { metadata, classification, text: facts.text, previews };
}
