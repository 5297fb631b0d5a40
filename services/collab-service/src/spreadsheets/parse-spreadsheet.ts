import { detectFormat, sniff } from './detect-format';
import {
  MB,
  type ParsedSheet,
  type ParseSpreadsheetInput,
  type ParseSpreadsheetOptions,
  positive,
  SPREADSHEET_DEFAULTS,
  type SpreadsheetStream,
} from './sheet-types';
import { SpreadsheetError } from './spreadsheet-error';
import { REJECTION_CODES, WorkerSheet } from './worker-sheet';
import { DEFAULT_ZIP_LIMITS, inspectZip, type ZipEntry, ZipRejection } from './zip-inspect';

export type { CellError, SheetFormat } from './parse-protocol';
export {
  type ParsedSheet,
  type ParseSpreadsheetInput,
  type ParseSpreadsheetOptions,
  type RowBatch,
  SPREADSHEET_DEFAULTS,
  type SpreadsheetStream,
} from './sheet-types';
export { SpreadsheetError } from './spreadsheet-error';

/**
 * Parses an uploaded CSV or XLSX in a worker thread with memory and time limits (xlsx 0.18.5 has
 * prototype-pollution and ReDoS advisories; the worker contains them and keeps the event loop free).
 * Bad input always ends in a {@link SpreadsheetError} (4xx), never a 500.
 */
export async function parseSpreadsheet(
  input: ParseSpreadsheetInput,
  options: ParseSpreadsheetOptions = {},
): Promise<ParsedSheet> {
  const stream = await openSpreadsheet(input, options);
  const { format, headers, delimiter, sheetName } = stream;
  const sheet: ParsedSheet = { format, headers, rows: [], rowNumbers: [], rowCount: 0, cellErrors: [] };
  if (delimiter !== undefined) sheet.delimiter = delimiter;
  if (sheetName !== undefined) sheet.sheetName = sheetName;
  for await (const batch of stream) {
    for (const values of batch.rows) sheet.rows.push(values);
    for (const rowNumber of batch.rowNumbers) sheet.rowNumbers.push(rowNumber);
    for (const cellError of batch.cellErrors) sheet.cellErrors.push(cellError);
  }
  sheet.rowCount = sheet.rows.length;
  return sheet;
}

/**
 * Starts parsing an uploaded CSV or XLSX (see {@link parseSpreadsheet}); resolves once the header
 * row is read. Size, format and ZIP checks happen before the worker starts.
 */
export async function openSpreadsheet(
  input: ParseSpreadsheetInput,
  options: ParseSpreadsheetOptions = {},
): Promise<SpreadsheetStream> {
  const maxBytes = positive('maxBytes', options.maxBytes, SPREADSHEET_DEFAULTS.maxBytes);
  const { buffer } = input;
  if (buffer.byteLength === 0) throw new SpreadsheetError('validation_failed', 'The file is empty');
  if (buffer.byteLength > maxBytes) {
    throw new SpreadsheetError(
      'payload_too_large',
      `The file is ${megabytes(buffer.byteLength)} MB; the import limit is ${megabytes(maxBytes)} MB`,
    );
  }
  const format = detectFormat(input.filename, input.contentType);
  sniff(format, buffer);

  let zipEntries: ZipEntry[] | undefined;
  if (format === 'xlsx') {
    try {
      zipEntries = inspectZip(buffer, {
        ...DEFAULT_ZIP_LIMITS,
        maxUncompressedBytes: positive(
          'maxUncompressedBytes',
          options.maxUncompressedBytes,
          DEFAULT_ZIP_LIMITS.maxUncompressedBytes,
        ),
        maxCompressionRatio: positive(
          'maxCompressionRatio',
          options.maxCompressionRatio,
          DEFAULT_ZIP_LIMITS.maxCompressionRatio,
        ),
      });
    } catch (error) {
      if (!(error instanceof ZipRejection)) throw error;
      const code = error.reason === 'not_xlsx' ? 'unsupported_media_type' : REJECTION_CODES[error.reason];
      throw new SpreadsheetError(code, error.message);
    }
  }
  const stream = new WorkerSheet(format, buffer, zipEntries, options);
  await stream.opened;
  return stream;
}

function megabytes(bytes: number): string {
  return (bytes / MB).toFixed(bytes % MB === 0 ? 0 : 1);
}
