import type { ImportReport, ImportRowProblem } from '@hwp/contracts';
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
import { ImportQueue } from './import-queue';
import { hasParts, PartWriter, storedParts } from './part-import.store';
import { Findings, rejected, reportOf } from './part-import-findings';
import { type PlanContext, type PlannedRow, planRow, type StoredPart } from './part-import-plan';
import { ImportProgress } from './part-import-progress';
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
  private readonly slots: ImportQueue;

  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: BomSettingsService,
    private readonly events: PartEvents,
    private readonly logger: Logger,
    private readonly limits: PartImportLimits,
  ) {
    this.slots = new ImportQueue(limits);
  }

  /**
   * A slot for one import, waiting up to `queueWaitMs` (first come, first served) while `concurrency`
   * imports run; null when none came free in time or `signal` aborted. Call the result once to free it.
   */
  acquire(signal?: AbortSignal): Promise<(() => void) | null> {
    return this.slots.acquire(signal);
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
