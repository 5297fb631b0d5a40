import * as CFB from 'cfb';

/** What can be read of a SolidWorks part, assembly or drawing without SolidWorks. */
export interface SolidWorksFacts {
  /** `ole-compound` (SolidWorks up to 2014, an OLE2 compound file) or `solidworks-2015` (the later container). */
  container: 'ole-compound' | 'solidworks-2015';
  /** The streams of a compound file (names only); null for the later container, which has no directory we read. */
  streams: string[] | null;
  /** The preview the program saved with the file: a PNG, when one is there. */
  preview: Buffer | null;
  /** Where the preview came from: the `PreviewPNG` stream or a PNG embedded in the later container. */
  previewSource: 'PreviewPNG' | 'embedded-png' | null;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const OLE_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const MAX_PREVIEW_BYTES = 16 * 1024 * 1024;

/**
 * A whole PNG starting at `start`: the chunks walked by their lengths up to IEND, so a signature
 * that merely occurs in compressed data is not taken for an image. Null when the chunks do not add up.
 */
function pngAt(data: Buffer, start: number): Buffer | null {
  let offset = start + PNG_SIGNATURE.length;
  for (let chunk = 0; offset + 12 <= data.length; chunk++) {
    const length = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    if (chunk === 0 && type !== 'IHDR') return null;
    if (!/^[A-Za-z]{4}$/.test(type)) return null;
    const end = offset + 12 + length;
    if (end > data.length || end - start > MAX_PREVIEW_BYTES) return null;
    if (type === 'IEND') return Buffer.from(data.subarray(start, end));
    offset = end;
  }
  return null;
}

/** The first well-formed PNG in `data`, or null. */
function firstPng(data: Buffer): Buffer | null {
  for (let at = data.indexOf(PNG_SIGNATURE); at >= 0; at = data.indexOf(PNG_SIGNATURE, at + 1)) {
    const png = pngAt(data, at);
    if (png) return png;
  }
  return null;
}

/**
 * The container and the saved preview of a SolidWorks file. Files up to SolidWorks 2014 are OLE2
 * compound files whose `PreviewPNG` stream holds the preview (read through the `cfb` package);
 * later ones use SolidWorks' own container, in which the preview is stored as a plain PNG.
 */
export function readSolidWorks(data: Buffer): SolidWorksFacts {
  if (data.subarray(0, OLE_SIGNATURE.length).equals(OLE_SIGNATURE)) {
    const container = CFB.read(data, { type: 'buffer' });
    const streams = container.FileIndex.filter((entry) => entry.type === 2).map((entry) => entry.name);
    const entry = container.FileIndex.find((e) => e.type === 2 && e.name.toLowerCase() === 'previewpng');
    const content = entry?.content ? Buffer.from(entry.content as Uint8Array) : null;
    const preview = content?.subarray(0, 8).equals(PNG_SIGNATURE) ? pngAt(content, 0) : null;
    return { container: 'ole-compound', streams, preview, previewSource: preview ? 'PreviewPNG' : null };
  }
  const preview = firstPng(data);
  return {
    container: 'solidworks-2015',
    streams: null,
    preview,
    previewSource: preview ? 'embedded-png' : null,
  };
}
