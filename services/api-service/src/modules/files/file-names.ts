import { MAX_FILE_NAME_BYTES, MAX_FOLDER_PATH } from '@hwp/contracts';
import { ValidationError } from '@hwp/platform';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function refuse(field: string, message: string): never {
  throw new ValidationError(`${field} ${message}`, [{ field, message }]);
}

/** One path segment: NFC, trimmed, no separators, control characters, `.`/`..`, at most 255 bytes. */
function segment(value: string, field: string): string {
  const text = value.normalize('NFC').trim();
  if (text === '') refuse(field, 'must not be empty');
  if (CONTROL.test(text) || LONE_SURROGATE.test(text)) refuse(field, 'must not hold control characters');
  if (/[/\\]/.test(text)) refuse(field, 'must not hold / or \\');
  if (text === '.' || text === '..') refuse(field, 'must not be . or ..');
  if (Buffer.byteLength(text) > MAX_FILE_NAME_BYTES)
    refuse(field, `must be at most ${MAX_FILE_NAME_BYTES} bytes`);
  return text;
}

/**
 * The name a file is stored under. Browsers send only the last segment; a client that sends a path
 * (`../x`, `C:\dir\x`) gets it refused rather than silently shortened.
 */
export function fileName(raw: string): string {
  return segment(raw, 'file name');
}

/** `/` or `/a/b`: segments checked like names; empty segments and a trailing slash dropped. */
export function folderPath(raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '' || raw.trim() === '/') return '/';
  if (raw.length > MAX_FOLDER_PATH) refuse('folder_path', `must be at most ${MAX_FOLDER_PATH} characters`);
  const parts = raw
    .split('/')
    .filter((part) => part.trim() !== '')
    .map((part) => segment(part, 'folder_path'));
  return parts.length ? `/${parts.join('/')}` : '/';
}

export function joinPath(folder: string, name: string): string {
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

/** Lower-case extension without the dot; `''` when there is none. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

const MIME_TYPES: Record<string, string> = {
  step: 'model/step',
  stp: 'model/step',
  iges: 'model/iges',
  igs: 'model/iges',
  stl: 'model/stl',
  obj: 'model/obj',
  '3mf': 'model/3mf',
  glb: 'model/gltf-binary',
  gltf: 'model/gltf+json',
  dxf: 'image/vnd.dxf',
  dwg: 'image/vnd.dwg',
  sldprt: 'application/x-sldprt',
  sldasm: 'application/x-sldasm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html',
  zip: 'application/zip',
  gz: 'application/gzip',
  '7z': 'application/x-7z-compressed',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

/** The media type of a name's extension; unknown extensions are `application/octet-stream`. */
export function mimeTypeOf(name: string): string {
  return MIME_TYPES[extensionOf(name)] ?? 'application/octet-stream';
}
