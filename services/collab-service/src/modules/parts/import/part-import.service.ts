import type { ImportProgressData, ImportReport, ImportRowProblem } from '@hwp/contracts';
import { AppError, type Logger, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { normaliseHeaders } from '../../../spreadsheets/headers';
import { openSpreadsheet, type SpreadsheetStream } from '../../../spreadsheets/parse-spreadsheet';
import type { CollabUserEntity } from '../../identity/collab-user.entity';
import type { WorkspaceScope } from '../../workspace-access/workspace-scope';
import type { BomSettingsService } from '../bom-settings.service';
import { advanceCounters, highestSequences } from '../part-numbering';
import { PartsRepository } from '../parts.repository';
import type { PartEvents } from '../parts.service';
import { PART_IMPORT_ALIASES, type PartImportField } from './header-aliases';
import { hasParts, PartWriter, storedParts } from './part-import.store';
import { type PlanContext, type PlannedRow, planRow, type StoredPart } from './part-import-plan';
import { columnName, type PartRow, PartRowReader } from './part-rows';

export interface PartImportLimits {
  maxBytes: number;
  maxRows: number;
  timeoutMs: number;
  /** Heap limit of the parse worker (MB); unset, the parser's default. */
  maxMemoryMb?: number;
  /** Imports one process runs at once. */
  concurrency: number;
  /** How long an import waits for a free slot before it is turned away with 503. */
  queueWaitMs: number;
}

export interface ImportUpload {
  buffer: Uint8Array;
  filename?: string;
  contentType?: string;
}

/** Problems listed in a report; the counts are always complete. */
const LISTED_PROBLEMS = 1_000;
/** Parts an import creates from which it analyses the table (the list's estimates read its statistics). */
const ANALYZE_AFTER_CREATED = 1_000;
/** Rows between two `import.progress` events of the parse. */
const PROGRESS_EVERY = 10_000;

/** Longest the row checks run before yielding, whatever the row count. */
const YIELD_AFTER_MS = 20;
/** Characters one import may have checked against template patterns (seconds of CPU at most); rows past it are refused. */
const IMPORT_PATTERN_CHARS = 20_000_000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `POST /v1/parts/import`: the file is parsed (worker thread), checked and, for an apply, written in
 * one transaction, all three at once batch by batch (see `pass`); a dry run only reports. Any row
 * error writes nothing. Existing part numbers update their part; rows that change nothing are not
 * written, so importing a file twice changes nothing the second time. Progress goes to the
 * importing user as `import.progress` events.
 */
export class PartImportService {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: BomSettingsService,
    private readonly events: PartEvents,
    private readonly logger: Logger,
    private readonly limits: PartImportLimits,
  ) {}

  /**
   * A slot for one import, waiting up to `queueWaitMs` (first come, first served) while `concurrency`
   * imports run; null when none came free in time or `signal` aborted. Call the result once to free it.
   */
  acquire(signal?: AbortSignal): Promise<(() => void) | null> {
    if (this.running < this.limits.concurrency) return Promise.resolve(this.grant());
    return new Promise((resolve) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', gone);
        const index = this.waiting.indexOf(take);
        if (index >= 0) this.waiting.splice(index, 1);
      };
      const take = () => {
        leave();
        resolve(this.grant());
      };
      const gone = () => {
        leave();
        resolve(null);
      };
      const timer = setTimeout(gone, this.limits.queueWaitMs);
      signal?.addEventListener('abort', gone, { once: true });
      this.waiting.push(take);
    });
  }

  private grant(): () => void {
    this.running++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.running--;
      // The slot goes straight to the longest waiter.
      this.waiting[0]?.();
    };
  }

  async run(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    upload: ImportUpload,
    options: { dryRun: boolean; decimal?: 'dot' | 'comma' },
    signal?: AbortSignal,
  ): Promise<ImportReport> {
    const { dryRun, decimal = 'dot' } = options;
    const importId = newId();
    const progress = new ImportProgress(this.dataSource, this.events, this.logger, access, actor, {
      importId,
      dryRun,
    });
    let opened: SpreadsheetStream | undefined;
    try {
      const sheet = await openSpreadsheet(upload, {
        maxBytes: this.limits.maxBytes,
        maxRows: this.limits.maxRows,
        timeoutMs: this.limits.timeoutMs,
        maxMemoryMb: this.limits.maxMemoryMb,
        progressEvery: PROGRESS_EVERY,
        onProgress: (rows) => progress.send('parsing', rows),
        signal,
        handOver: true,
      });
      opened = sheet;
      upload.buffer = new Uint8Array(0); // the worker has it now
      const mapping = normaliseHeaders(sheet.headers, PART_IMPORT_ALIASES);
      if (mapping.columns.partNumber === undefined) {
        throw new ValidationError(
          'The first row of the file must name a part number column (part_number or pn); found: ' +
            (sheet.headers.join(', ') || 'no headers'),
          [{ field: 'file', message: 'no part_number column' }],
        );
      }
      const column = (field: PartImportField) => mapping.columns[field] ?? columnName(field);
      const ignoredColumns = [...mapping.unknown, ...mapping.duplicates.flatMap((d) => d.headers.slice(1))];
      const pass: Pass = {
        access,
        actor,
        importId,
        sheet,
        reader: new PartRowReader(sheet, mapping, decimal),
        column,
        progress,
        signal,
        write: !dryRun,
      };
      // The row count is complete once a pass has read the whole sheet.
      const reportFor = (findings: Findings) =>
        reportOf({ importId, dryRun, format: sheet.format, rows: sheet.rowCount, ignoredColumns }, findings);

      if (dryRun) {
        const manager = this.dataSource.manager;
        const report = reportFor(await this.pass(manager, pass));
        await progress.flush();
        await progress.done(manager, report);
        return report;
      }

      const applied = await this.dataSource.transaction(async (manager) => {
        const findings = await this.pass(manager, pass);
        const report = reportFor(findings);
        if (findings.invalidRows > 0) throw rejected(report);
        // Every progress event is out before the workspace's event counter is locked below.
        await progress.flush();
        // Last: emitting locks the workspace's event counter until commit.
        if (report.created + report.updated > 0) {
          await this.events.emit(
            manager,
            access,
            'part',
            { action: 'imported', importId, created: report.created, updated: report.updated },
            { actor },
          );
        }
        await progress.done(manager, report);
        return report;
      });
      await this.analyseAfter(applied);
      return applied;
    } catch (error) {
      await progress.flush();
      progress.send('failed', 0, undefined, error instanceof AppError ? error.detail : 'The import failed');
      await progress.flush();
      throw error;
    } finally {
      opened?.close();
    }
  }

  /**
   * After a bulk write, the planner's statistics of `parts` are brought up to date before answering:
   * the list's total past COUNT_BOUND is the planner's estimate, and until autovacuum came by (about
   * a minute) page 1 said 1,001 for a workspace the import had just filled with 20,000. ANALYZE
   * reads a bounded sample (30,000 rows), so its cost does not grow with the table. A failure only
   * leaves the estimate stale: logged, never the import's answer.
   */
  private async analyseAfter(report: ImportReport): Promise<void> {
    if (report.created < ANALYZE_AFTER_CREATED) return;
    await this.dataSource.query('ANALYZE parts').catch((error: unknown) => {
      this.logger.warn({ err: error }, 'ANALYZE parts after an import failed; list totals stay estimates');
    });
  }

  /**
   * Checks (and with `write`, writes) the sheet's rows batch by batch as the parser hands them on:
   * one batch is checked against the stored parts and the rules, then written while the next batch
   * is parsed and checked. After the first row error nothing more is written (the caller rolls the
   * transaction back) but checking goes on, so the report counts every problem.
   */
  private async pass(manager: EntityManager, pass: Pass): Promise<Findings> {
    const { access, actor, sheet, reader, progress, signal } = pass;
    const rules = await this.settings.rules(access.in(manager));
    const findings = new Findings();
    const plan: PlanContext = {
      rules,
      role: access.role,
      column: pass.column,
      patternBudget: { left: IMPORT_PATTERN_CHARS },
    };
    const target = { workspaceId: access.id, actorId: actor.id, importId: pass.importId, at: new Date() };
    const parts = new PartsRepository(access.in(manager));
    const writer = pass.write
      ? new PartWriter(manager, target, (highest) => advanceCounters(parts, highest))
      : undefined;
    // Into a workspace without parts every row is new: its parts are not looked up (a first import,
    // the bulk load of a catalog, saves a statement per batch). A part someone creates meanwhile
    // with a number of the file then stops the import at its write (409), as when it is created
    // between a batch's lookup and its write.
    const empty = !(await hasParts(this.dataSource.manager, access.id));
    try {
      for await (const batch of sheet) {
        signal?.throwIfAborted();
        const { rows, problems } = reader.read(batch);
        // Read on a pooled connection while the transaction's connection writes earlier batches:
        // only committed parts can be updated (this file's own rows never share a part number).
        const stored = empty
          ? new Map<string, StoredPart>()
          : await storedParts(
              this.dataSource.manager,
              access.id,
              rows.map((r) => r.key),
            );
        const planned = await this.check(rows, stored, plan, problems, findings, signal);
        if (!writer || findings.invalidRows > 0) continue;
        const creates = planned.filter((p) => p.kind === 'create');
        const updates = planned.filter((p) => p.kind === 'update');
        await writer.add(creates, updates, highestSequences(rules.numberingRules, creates));
      }
      // With row errors the caller rolls back: the rows still filling are not sent at all, and the
      // 400 with the report wins over whatever an earlier write met.
      if (findings.invalidRows === 0) await writer?.finish();
    } finally {
      // No statement of this import may still run when its transaction ends.
      await writer?.settled();
    }
    const total = sheet.rowCount;
    progress.send('checking', total, total);
    if (pass.write) progress.send('writing', total, total);
    return findings;
  }

  /** One batch's rows against the stored parts and the workspace's rules, into `findings`. */
  private async check(
    rows: PartRow[],
    stored: Map<string, StoredPart>,
    context: PlanContext,
    errors: ImportRowProblem[],
    findings: Findings,
    signal: AbortSignal | undefined,
  ): Promise<PlannedRow[]> {
    const warnings: ImportRowProblem[] = [];
    const planned: PlannedRow[] = [];
    let slice = performance.now();
    for (const row of rows) {
      const result = planRow(row, stored.get(row.key), context);
      for (const e of result.errors) errors.push(e);
      for (const w of result.warnings) warnings.push(w);
      if (result.planned) planned.push(result.planned);
      // Rows whose template checks are slow (long attributes) yield now and then.
      if (performance.now() - slice > YIELD_AFTER_MS) {
        await yieldToEventLoop();
        slice = performance.now();
        signal?.throwIfAborted();
      }
    }
    findings.add(planned, errors, warnings);
    return planned;
  }
}

/** One import's pass over its rows. */
interface Pass {
  access: WorkspaceScope;
  actor: CollabUserEntity;
  importId: string;
  sheet: SpreadsheetStream;
  reader: PartRowReader;
  column: (field: PartImportField) => string;
  progress: ImportProgress;
  signal: AbortSignal | undefined;
  /** Apply: write the rows (in the caller's transaction). */
  write: boolean;
}

/** What checking the rows found so far: counts complete, problems listed up to a bound, in row order. */
class Findings {
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

function reportOf(
  base: Pick<ImportReport, 'importId' | 'dryRun' | 'format' | 'rows' | 'ignoredColumns'>,
  findings: Findings,
): ImportReport {
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

function rejected(report: ImportReport): AppError {
  const invalid = report.rows - report.valid;
  return new AppError(
    'validation_failed',
    `${invalid} of ${report.rows} rows have errors; nothing was imported (see report.errors)`,
    { extra: { report } },
  );
}

/**
 * `import.progress` events for the importing user, each in a transaction of its own, in order.
 * Sending never waits and never fails the import (a lost progress event is only a lost hint).
 */
class ImportProgress {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: PartEvents,
    private readonly logger: Logger,
    private readonly access: WorkspaceScope,
    private readonly actor: CollabUserEntity,
    private readonly fixed: Pick<ImportProgressData, 'importId' | 'dryRun'>,
  ) {}

  data(
    phase: ImportProgressData['phase'],
    processed: number,
    counts?: Pick<ImportReport, 'rows' | 'created' | 'updated' | 'unchanged' | 'errorCount'>,
  ): ImportProgressData {
    const data: ImportProgressData = { ...this.fixed, kind: 'parts', phase, processed };
    if (counts) {
      data.total = counts.rows;
      data.created = counts.created;
      data.updated = counts.updated;
      data.unchanged = counts.unchanged;
      data.errorCount = counts.errorCount;
    }
    return data;
  }

  send(phase: ImportProgressData['phase'], processed: number, total?: number, detail?: string): void {
    const data = this.data(phase, processed);
    if (total !== undefined) data.total = total;
    if (detail !== undefined) data.detail = detail;
    this.chain = this.chain
      .then(() =>
        this.events.emit(this.dataSource.manager, this.access, 'import.progress', data, {
          actor: this.actor,
          to: this.actor,
        }),
      )
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.warn({ err: error, importId: this.fixed.importId }, 'import progress event not sent'),
      );
  }

  flush(): Promise<void> {
    return this.chain;
  }

  /** The last event, `done` with the report's counts, on `manager` (for an apply, its transaction). */
  async done(manager: EntityManager, report: ImportReport): Promise<void> {
    await this.events.emit(manager, this.access, 'import.progress', this.data('done', report.rows, report), {
      actor: this.actor,
      to: this.actor,
    });
  }
}
