import type { ImportProgressData, ImportReport, ImportRowProblem } from '@hwp/contracts';
import { AppError, type Logger, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../../identity/collab-user.entity';
import type { WorkspaceScope } from '../../workspaces/workspace-scope';
import type { BomSettingsService, PartRules } from '../bom-settings.service';
import { advanceCounters } from '../part-numbering';
import { PartsRepository } from '../parts.repository';
import type { PartEvents } from '../parts.service';
import {
  type HeaderMapping,
  normaliseHeaders,
  PART_IMPORT_ALIASES,
  type PartImportField,
} from './header-aliases';
import { type ParsedSheet, parseSpreadsheet } from './parse-spreadsheet';
import { IMPORT_BATCH_ROWS, insertParts, newPartsJson, storedParts, updateParts } from './part-import.store';
import { type PlannedRow, planRow } from './part-import-plan';
import { columnName, type PartRow, PartRowReader } from './part-rows';

export interface PartImportLimits {
  maxBytes: number;
  maxRows: number;
  timeoutMs: number;
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
/** Rows between two `import.progress` events of a phase. */
const PROGRESS_EVERY = 10_000;
/** Rows handled between two yields to the event loop, so other requests are answered meanwhile. */
const YIELD_EVERY = 2_000;

/** Longest the row checks run before yielding, whatever the row count. */
const YIELD_AFTER_MS = 20;
/** Characters one import may have checked against template patterns (seconds of CPU at most); rows past it are refused. */
const IMPORT_PATTERN_CHARS = 20_000_000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What checking the rows against the workspace found. */
interface Findings {
  planned: PlannedRow[];
  errors: ImportRowProblem[];
  warnings: ImportRowProblem[];
  /** Rows with at least one error. */
  invalidRows: number;
}

/**
 * `POST /v1/parts/import`: parse (worker thread), check every row, then report (dry run) or write
 * every row in one transaction (apply; any row error writes nothing). Existing part numbers update
 * their part; rows that change nothing are not written, so importing a file twice changes nothing
 * the second time. Progress goes to the importing user as `import.progress` events.
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
    try {
      const sheet = await parseSpreadsheet(upload, {
        maxBytes: this.limits.maxBytes,
        maxRows: this.limits.maxRows,
        timeoutMs: this.limits.timeoutMs,
        progressEvery: PROGRESS_EVERY,
        onProgress: (rows) => progress.send('parsing', rows),
        signal,
      });
      upload.buffer = new Uint8Array(0); // parsed: up to 50 MB need not wait for the database
      const mapping = normaliseHeaders(sheet.headers, PART_IMPORT_ALIASES);
      if (mapping.columns.partNumber === undefined) {
        throw new ValidationError(
          'The first row of the file must name a part number column (part_number or pn); found: ' +
            (sheet.headers.join(', ') || 'no headers'),
          [{ field: 'file', message: 'no part_number column' }],
        );
      }
      const total = sheet.rowCount;
      const { rows, problems } = await this.readRows(sheet, mapping, decimal, progress, signal);
      const column = (field: PartImportField) => mapping.columns[field] ?? columnName(field);
      const ignoredColumns = [...mapping.unknown, ...mapping.duplicates.flatMap((d) => d.headers.slice(1))];
      const base = { importId, dryRun, format: sheet.format, rows: total, ignoredColumns };

      if (dryRun) {
        const manager = this.dataSource.manager;
        const rules = await this.settings.rules(access.in(manager));
        const findings = await this.check(manager, access, rules, rows, problems, column, signal);
        const report = reportOf(base, findings);
        await progress.flush();
        await this.events.emit(manager, access, 'import.progress', progress.data('done', total, report), {
          actor,
          to: actor,
        });
        return report;
      }

      progress.send('writing', 0, total);
      // Committed before the import's transaction starts, so the importer sees `writing` before `done`.
      await progress.flush();
      return await this.dataSource.transaction(async (manager) => {
        const rules = await this.settings.rules(access.in(manager));
        const findings = await this.check(manager, access, rules, rows, problems, column, signal);
        rows.length = 0; // planned rows hold what is written; release the rest
        const report = reportOf(base, findings);
        if (findings.invalidRows > 0) throw rejected(report);
        await this.write(manager, access, actor, importId, rules, findings.planned, signal);
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
        await this.events.emit(manager, access, 'import.progress', progress.data('done', total, report), {
          actor,
          to: actor,
        });
        return report;
      });
    } catch (error) {
      await progress.flush();
      progress.send('failed', 0, undefined, error instanceof AppError ? error.detail : 'The import failed');
      await progress.flush();
      throw error;
    }
  }

  /** The checks without the database, row by row, yielding to the event loop now and then. */
  private async readRows(
    sheet: ParsedSheet,
    mapping: HeaderMapping<PartImportField>,
    decimal: 'dot' | 'comma',
    progress: ImportProgress,
    signal: AbortSignal | undefined,
  ): Promise<{ rows: PartRow[]; problems: ImportRowProblem[] }> {
    const reader = new PartRowReader(sheet, mapping, decimal);
    const rows: PartRow[] = [];
    const problems: ImportRowProblem[] = [];
    const total = sheet.rowCount;
    for (let i = 0; i < total; i++) {
      const result = reader.take(i);
      if ('row' in result) rows.push(result.row);
      else problems.push(...result.problems);
      if ((i + 1) % YIELD_EVERY === 0) {
        await yieldToEventLoop();
        signal?.throwIfAborted();
      }
      if ((i + 1) % PROGRESS_EVERY === 0) progress.send('checking', i + 1, total);
    }
    progress.send('checking', total, total);
    return { rows, problems };
  }

  /** The rows against the stored parts and the workspace's rules. */
  private async check(
    manager: EntityManager,
    access: WorkspaceScope,
    rules: PartRules,
    rows: PartRow[],
    problems: ImportRowProblem[],
    column: (field: PartImportField) => string,
    signal: AbortSignal | undefined,
  ): Promise<Findings> {
    const stored = await storedParts(
      manager,
      access.id,
      rows.map((r) => r.key),
    );
    const errors = [...problems];
    const warnings: ImportRowProblem[] = [];
    const planned: PlannedRow[] = [];
    const context = { rules, role: access.role, column, patternBudget: { left: IMPORT_PATTERN_CHARS } };
    let slice = performance.now();
    for (let i = 0; i < rows.length; i++) {
      const result = planRow(rows[i], stored.get(rows[i].key), context);
      errors.push(...result.errors);
      warnings.push(...result.warnings);
      if (result.planned) planned.push(result.planned);
      // Rows whose template checks are slow (long attributes) yield sooner than every YIELD_EVERY.
      if ((i + 1) % YIELD_EVERY === 0 || performance.now() - slice > YIELD_AFTER_MS) {
        await yieldToEventLoop();
        slice = performance.now();
        signal?.throwIfAborted();
      }
    }
    errors.sort((a, b) => a.row - b.row);
    warnings.sort((a, b) => a.row - b.row);
    return { planned, errors, warnings, invalidRows: new Set(errors.map((e) => e.row)).size };
  }

  private async write(
    manager: EntityManager,
    access: WorkspaceScope,
    actor: CollabUserEntity,
    importId: string,
    rules: PartRules,
    planned: PlannedRow[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const context = { workspaceId: access.id, actorId: actor.id, importId, at: new Date() };
    const creates = planned.filter((p) => p.kind === 'create');
    const updates = planned.filter((p) => p.kind === 'update');
    // From here on each row is held only until its batch is written.
    planned.length = 0;
    await advanceCounters(new PartsRepository(access.in(manager)), rules.numberingRules, creates);
    await inBatches(creates, signal, newPartsJson, (json) => insertParts(manager, context, json));
    await inBatches(
      updates,
      signal,
      (batch) => batch,
      (batch) => updateParts(manager, context, batch),
    );
  }
}

/**
 * Writes `list` in batches, emptying it as it goes: each batch is prepared (its statement's payload
 * built) while the previous one's statement runs, so the database and this process work at once.
 */
async function inBatches<T, P>(
  list: T[],
  signal: AbortSignal | undefined,
  prepare: (batch: T[]) => P,
  write: (payload: P) => Promise<void>,
): Promise<void> {
  let running: Promise<void> | undefined;
  while (list.length > 0) {
    const payload = prepare(list.splice(0, IMPORT_BATCH_ROWS));
    await running;
    signal?.throwIfAborted();
    running = write(payload);
  }
  await running;
}

function reportOf(
  base: Pick<ImportReport, 'importId' | 'dryRun' | 'format' | 'rows' | 'ignoredColumns'>,
  findings: Findings,
): ImportReport {
  const count = (kind: PlannedRow['kind']) => findings.planned.filter((p) => p.kind === kind).length;
  return {
    ...base,
    valid: base.rows - findings.invalidRows,
    errors: findings.errors.slice(0, LISTED_PROBLEMS),
    errorCount: findings.errors.length,
    warnings: findings.warnings.slice(0, LISTED_PROBLEMS),
    warningCount: findings.warnings.length,
    created: count('create'),
    updated: count('update'),
    unchanged: count('unchanged'),
  };
}

function rejected(report: ImportReport): AppError {
  const invalid = report.rows - report.valid;
  return new AppError(
    'validation_failed',
    400,
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
}
