import type { SheetFormat } from './parse-protocol';
import { SpreadsheetError } from './spreadsheet-error';

/** Which format an upload is, from its name and content type, and whether its bytes agree. */

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const CSV_TYPES = new Set([
  'text/csv',
  'application/csv',
  'text/x-csv',
  'application/x-csv',
  'text/comma-separated-values',
  'text/tab-separated-values',
]);
/** Content types that say nothing about the format; the file name decides. */
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);
const COMPATIBLE_TYPES: Record<SheetFormat, Set<string>> = {
  // Browsers on Windows label .csv files application/vnd.ms-excel.
  csv: new Set([...CSV_TYPES, 'text/plain', 'application/vnd.ms-excel']),
  xlsx: new Set([XLSX_TYPE, 'application/zip', 'application/x-zip-compressed']),
};
const EXTENSIONS = new Map<string, SheetFormat>([
  ['csv', 'csv'],
  ['tsv', 'csv'],
  ['xlsx', 'xlsx'],
]);
const SUPPORTED = 'upload a CSV (.csv, UTF-8) or an Excel workbook (.xlsx)';

/** The file name's extension decides; a content type must agree with it, or decides when there is none. */
export function detectFormat(filename: string | undefined, contentType: string | undefined): SheetFormat {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase().slice(0, 100);
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const extension =
    dot > 0
      ? base
          .slice(dot + 1)
          .toLowerCase()
          .slice(0, 20)
      : '';
  if (extension !== '') {
    const format = EXTENSIONS.get(extension);
    if (format === undefined) {
      throw new SpreadsheetError(
        'unsupported_media_type',
        `.${extension} files are not supported; ${SUPPORTED}`,
      );
    }
    if (!GENERIC_TYPES.has(type) && !COMPATIBLE_TYPES[format].has(type)) {
      throw new SpreadsheetError(
        'unsupported_media_type',
        `The file name says .${extension} but the content type is ${type}; ${SUPPORTED}`,
      );
    }
    return format;
  }
  if (CSV_TYPES.has(type)) return 'csv';
  if (type === XLSX_TYPE) return 'xlsx';
  const why = GENERIC_TYPES.has(type)
    ? 'The file type cannot be told'
    : `Content type ${type} is not supported`;
  throw new SpreadsheetError('unsupported_media_type', `${why}; ${SUPPORTED}`);
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0];
const SIGNATURES: [number[], string][] = [
  [ZIP_MAGIC, 'a ZIP archive'],
  [OLE_MAGIC, 'a legacy .xls or a password-protected workbook'],
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'a GIF image'],
  [[0x25, 0x50, 0x44, 0x46], 'a PDF document'],
  [[0x1f, 0x8b], 'a gzip archive'],
];

const startsWith = (buffer: Uint8Array, magic: number[]) => magic.every((byte, i) => buffer[i] === byte);
const looksLike = (buffer: Uint8Array) => SIGNATURES.find(([magic]) => startsWith(buffer, magic))?.[1];

/** Checks the content is what the name or type claimed (a PNG renamed .csv is still a PNG). */
export function sniff(format: SheetFormat, buffer: Uint8Array): void {
  if (format === 'xlsx') {
    if (startsWith(buffer, ZIP_MAGIC)) return;
    const seen = looksLike(buffer);
    const hint = startsWith(buffer, OLE_MAGIC) ? '; save it as .xlsx without a password' : '';
    throw new SpreadsheetError(
      'unsupported_media_type',
      `The file is not an XLSX workbook${seen ? ` (it looks like ${seen})` : ''}${hint}`,
    );
  }
  if (startsWith(buffer, [0xff, 0xfe]) || startsWith(buffer, [0xfe, 0xff])) {
    throw new SpreadsheetError(
      'unsupported_media_type',
      'The CSV file is not UTF-8 text (it is UTF-16); save it as "CSV UTF-8" and upload it again',
    );
  }
  const seen = looksLike(buffer) ?? (buffer.subarray(0, 8192).includes(0) ? 'binary data' : undefined);
  if (seen)
    throw new SpreadsheetError('unsupported_media_type', `The file is not CSV text (it looks like ${seen})`);
}
