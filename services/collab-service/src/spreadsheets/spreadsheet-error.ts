import { AppError, type AppErrorOptions } from '@hwp/platform';

export type SpreadsheetErrorCode = 'validation_failed' | 'payload_too_large' | 'unsupported_media_type';

/** A spreadsheet the import refuses: 400 unreadable, 413 too large or too costly, 415 not CSV/XLSX. */
export class SpreadsheetError extends AppError {
  constructor(code: SpreadsheetErrorCode, detail: string, options?: AppErrorOptions) {
    super(code, detail, options);
  }
}
