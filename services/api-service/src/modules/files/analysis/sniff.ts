import type { FileClassification } from '@hwp/contracts';

/** What the first bytes say a file is (null: they do not say). */
export type Detected =
  | 'png'
  | 'jpeg'
  | 'gif'
  | 'webp'
  | 'tiff'
  | 'bmp'
  | 'pdf'
  | 'zip'
  | 'gzip'
  | '7z'
  | 'rar'
  | 'dwg'
  | 'ole'
  | 'step'
  | 'iges'
  | 'stl-ascii'
  | 'dxf'
  | 'svg'
  | 'html'
  | 'xml'
  | 'exe'
  | 'elf'
  | 'text';

const startsWith = (head: Buffer, bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);

/** Reads the magic bytes (and, for text formats, the first line or two). */
export function detect(head: Buffer): Detected | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (
    head
      .subarray(0, 6)
      .toString('latin1')
      .match(/^GIF8[79]a$/)
  )
    return 'gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'webp';
  if (startsWith(head, [0x49, 0x49, 0x2a, 0x00]) || startsWith(head, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04]) || startsWith(head, [0x50, 0x4b, 0x05, 0x06])) return 'zip';
  if (startsWith(head, [0x1f, 0x8b])) return 'gzip';
  if (startsWith(head, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])) return '7z';
  if (head.subarray(0, 4).toString('latin1') === 'Rar!') return 'rar';
  if (/^AC10[0-3]\d$/.test(head.subarray(0, 6).toString('latin1'))) return 'dwg';
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'ole';
  if (startsWith(head, [0x4d, 0x5a])) return 'exe';
  if (startsWith(head, [0x7f, 0x45, 0x4c, 0x46])) return 'elf';
  if (head.subarray(0, 2).toString('latin1') === 'BM' && head.length > 14) return 'bmp';
  const text = head
    .subarray(0, 4096)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '');
  const trimmed = text.trimStart();
  if (trimmed.startsWith('ISO-10303-21;')) return 'step';
  if (/^[ \t]*0\r?\n[ \t]*SECTION\b/.test(text)) return 'dxf';
  if (/^solid\b/i.test(trimmed) && /\bfacet\b/i.test(text)) return 'stl-ascii';
  const firstLine = text.split(/\r?\n/, 1)[0] ?? '';
  if (firstLine.length >= 73 && firstLine[72] === 'S' && /^.{72}S\s*\d+\s*$/.test(firstLine)) return 'iges';
  if (/^<\?xml[^>]*>\s*(<!--[\s\S]*?-->\s*)*<svg\b/i.test(trimmed) || /^<svg\b/i.test(trimmed)) return 'svg';
  if (/^(<!doctype html|<html\b)/i.test(trimmed)) return 'html';
  if (/^<\?xml\b/i.test(trimmed)) return 'xml';
  // Text: no NUL and mostly printable in what was read.
  if (head.length > 0 && !head.subarray(0, 4096).includes(0)) {
    let printable = 0;
    const sample = head.subarray(0, 4096);
    for (const b of sample) if (b === 9 || b === 10 || b === 13 || (b >= 32 && b !== 127)) printable++;
    if (printable / sample.length > 0.95) return 'text';
  }
  return null;
}

/** The formats an extension may legitimately hold (beyond `text` for text formats). */
const EXPECTED: Record<string, Detected[]> = {
  png: ['png'],
  jpg: ['jpeg'],
  jpeg: ['jpeg'],
  gif: ['gif'],
  webp: ['webp'],
  tif: ['tiff'],
  tiff: ['tiff'],
  bmp: ['bmp'],
  pdf: ['pdf'],
  zip: ['zip'],
  '3mf': ['zip'],
  docx: ['zip'],
  xlsx: ['zip'],
  pptx: ['zip'],
  gz: ['gzip'],
  tgz: ['gzip'],
  '7z': ['7z'],
  rar: ['rar'],
  dwg: ['dwg'],
  sldprt: ['ole', 'zip'],
  sldasm: ['ole', 'zip'],
  slddrw: ['ole', 'zip'],
  step: ['step'],
  stp: ['step'],
  iges: ['iges', 'text'],
  igs: ['iges', 'text'],
  dxf: ['dxf', 'text'],
  svg: ['svg', 'xml'],
  html: ['html', 'text', 'xml'],
  htm: ['html', 'text', 'xml'],
  xml: ['xml', 'svg', 'text'],
  txt: ['text'],
  md: ['text'],
  csv: ['text'],
  json: ['text'],
  obj: ['text'],
};
/**
 * True when the content is a known format that the extension cannot hold (a `.png` that is a PE
 * executable or an HTML page, a `.stl` that is a ZIP). Unknown extensions and undetectable content
 * never contradict; binary STL has no magic bytes, so a `.stl` may hold any binary that is not
 * another known format.
 */
export function contradicts(detected: Detected | null, extension: string): boolean {
  if (!detected) return false;
  const expected = EXPECTED[extension];
  if (extension === 'stl') return !['stl-ascii', 'text'].includes(detected);
  // Unknown extensions say nothing (firmware images are ELF files named .bin, say).
  if (!expected) return false;
  return !expected.includes(detected);
}

const CAD_3D = new Set([
  'step',
  'stp',
  'iges',
  'igs',
  'stl',
  'obj',
  '3mf',
  'sldprt',
  'sldasm',
  'x_t',
  'x_b',
  'brep',
  'glb',
  'gltf',
  'fbx',
  'ipt',
  'iam',
  'catpart',
  'catproduct',
  'prt',
  'jt',
]);
const CAD_2D = new Set(['dxf', 'dwg', 'slddrw', 'idw', 'catdrawing']);
const IMAGE = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'tif', 'tiff', 'bmp', 'svg']);
const DOCUMENT = new Set([
  'pdf',
  'doc',
  'docx',
  'txt',
  'md',
  'csv',
  'xlsx',
  'xls',
  'pptx',
  'odt',
  'rtf',
  'json',
  'xml',
  'html',
  'htm',
]);
const ARCHIVE = new Set(['zip', '7z', 'rar', 'gz', 'tgz', 'tar']);

/** By content first (what the bytes are), by extension where the bytes do not say. */
export function classify(detected: Detected | null, extension: string): FileClassification {
  switch (detected) {
    case 'step':
    case 'iges':
    case 'stl-ascii':
      return 'cad-3d';
    case 'dxf':
    case 'dwg':
      return 'cad-2d';
    case 'png':
    case 'jpeg':
    case 'gif':
    case 'webp':
    case 'tiff':
    case 'bmp':
    case 'svg':
      return 'image';
    case 'pdf':
      return 'document';
    case 'gzip':
    case '7z':
    case 'rar':
      return 'archive';
    case 'zip':
      // Office files and 3MF are ZIP containers too: the extension tells them apart.
      if (CAD_3D.has(extension)) return 'cad-3d';
      if (DOCUMENT.has(extension)) return 'document';
      return 'archive';
    case 'exe':
    case 'elf':
      return 'other';
    default:
      break;
  }
  if (CAD_3D.has(extension)) return 'cad-3d';
  if (CAD_2D.has(extension)) return 'cad-2d';
  if (IMAGE.has(extension)) return 'image';
  if (DOCUMENT.has(extension) || detected === 'text') return 'document';
  if (ARCHIVE.has(extension)) return 'archive';
  return 'other';
}

/** DWG release names of the version codes in the first six bytes. */
const DWG_RELEASES: Record<string, string> = {
  AC1009: 'R11/R12',
  AC1012: 'R13',
  AC1014: 'R14',
  AC1015: 'AutoCAD 2000',
  AC1018: 'AutoCAD 2004',
  AC1021: 'AutoCAD 2007',
  AC1024: 'AutoCAD 2010',
  AC1027: 'AutoCAD 2013',
  AC1032: 'AutoCAD 2018',
};

export function dwgVersion(head: Buffer): { code: string; release: string | null } | null {
  const code = head.subarray(0, 6).toString('latin1');
  return /^AC10\d\d$/.test(code) ? { code, release: DWG_RELEASES[code] ?? null } : null;
}
