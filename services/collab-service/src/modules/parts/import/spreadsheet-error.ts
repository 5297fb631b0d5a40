import { AppError, type AppErrorOptions } from '@hwp/platform';

export type SpreadsheetErrorCode = 'validation_failed' | 'payload_too_large' | 'unsupported_media_type';

const STATUS: Record<SpreadsheetErrorCode, number> = {
  validation_failed: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
};

/** A spreadsheet the import refuses: 400 unreadable, 413 too large or too costly, 415 not CSV/XLSX. */
export class SpreadsheetError extends AppError {
  constructor(code: SpreadsheetErrorCode, detail: string, options?: AppErrorOptions) {
    super(code, STATUS[code], detail, options);
  }
}
