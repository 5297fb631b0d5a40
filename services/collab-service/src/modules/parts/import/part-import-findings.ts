import type { ImportReport, ImportRowProblem } from '@hwp/contracts';
import type { AppError } from '@hwp/platform';
import { importRejected, LISTED_PROBLEMS, type SheetFacts } from '../../../spreadsheets/import-report';
import type { PlannedRow } from './part-import-plan';

/** What checking the rows found so far: counts complete, problems listed up to a bound, in row order. */
export class Findings {
  readonly errors: ImportRowProblem[] = [];
  readonly warnings: ImportRowProblem[] = [];
  errorCount = 0;
  warningCount = 0;
  /** Rows with at least one error. */
  invalidRows = 0;
  created = 0;
  updated = 0;
  unchanged = 0;

  /** One batch's results (batches come in file order and never share a row). */
  add(planned: PlannedRow[], errors: ImportRowProblem[], warnings: ImportRowProblem[]): void {
    for (const p of planned) {
      if (p.kind === 'create') this.created++;
      else if (p.kind === 'update') this.updated++;
      else this.unchanged++;
    }
    this.errorCount += errors.length;
    this.warningCount += warnings.length;
    this.invalidRows += new Set(errors.map((e) => e.row)).size;
    listInRowOrder(this.errors, errors);
    listInRowOrder(this.warnings, warnings);
  }
}

function listInRowOrder(list: ImportRowProblem[], batch: ImportRowProblem[]): void {
  if (list.length >= LISTED_PROBLEMS || batch.length === 0) return;
  batch.sort((a, b) => a.row - b.row);
  for (const problem of batch.slice(0, LISTED_PROBLEMS - list.length)) list.push(problem);
}

/** The report of a pass: the sheet's facts and what its rows came to. */
export function reportOf(base: SheetFacts, findings: Findings): ImportReport {
  return {
    ...base,
    valid: base.rows - findings.invalidRows,
    errors: findings.errors,
    errorCount: findings.errorCount,
    warnings: findings.warnings,
    warningCount: findings.warningCount,
    created: findings.created,
    updated: findings.updated,
    unchanged: findings.unchanged,
  };
}

/** The 400 of an apply with row errors (nothing was written), the report attached. */
export function rejected(report: ImportReport): AppError {
  return importRejected(report.rows - report.valid, report);
}
