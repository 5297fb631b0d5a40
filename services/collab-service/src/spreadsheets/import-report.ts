import type { ImportReportBase } from '@hwp/contracts';
import { AppError } from '@hwp/platform';

/** Row problems (errors, warnings) an import's report lists; its counts are always complete. */
export const LISTED_PROBLEMS = 1_000;

/** What a report says of the file before its rows are checked. */
export type SheetFacts = Pick<ImportReportBase, 'importId' | 'dryRun' | 'format' | 'rows' | 'ignoredColumns'>;

/** The 400 of an applied import with `invalidRows` rows in error: nothing was written, the report says why. */
export function importRejected(invalidRows: number, report: ImportReportBase): AppError {
  return new AppError(
    'validation_failed',
    `${invalidRows} of ${report.rows} rows have errors; nothing was imported (see report.errors)`,
    { extra: { report } },
  );
}
