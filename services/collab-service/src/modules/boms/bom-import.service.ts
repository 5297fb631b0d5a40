import { type BomImportReport, type ImportRowProblem, MAX_REFDES_PER_BOM } from '@hwp/contracts';
import { newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { normaliseHeaders, openSpreadsheet, type SpreadsheetStream } from '../../spreadsheets';
import { importRejected, LISTED_PROBLEMS } from '../../spreadsheets/import-report';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { checkMove, type PartsService } from '../parts';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { BomEntity } from './bom.entity';
import {
  BOM_IMPORT_ALIASES,
  type BomImportField,
  cellsOf,
  DERIVED,
  type PlannedLine,
  readBomRow,
} from './bom-import-rows';
import { writeBomLines } from './bom-import-writer';
import type { BomLinesService } from './bom-lines.service';
import type { BomsService } from './boms.service';

export interface BomImportUpload {
  buffer: Uint8Array;
  filename?: string;
  contentType?: string;
}

/**
 * `POST /v1/boms/import`: the file's lines become the lines of a draft BOM, all or nothing. Missing
 * child parts are created with domain `other`. A dry run reports and writes nothing.
 */
export class BomImportService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly boms: BomsService,
    private readonly lines: BomLinesService,
    /** The parts catalog (the parts feature's exports): missing child parts are created there. */
    private readonly catalog: PartsService,
    private readonly limits: {
      maxBytes: number;
      maxRows: number;
      timeoutMs: number;
      /** Heap limit of the parse worker (MB); unset, the parser's default. */
      maxMemoryMb?: number;
      /** Designators of one file in all (BOM_MAX_REFDES); default MAX_REFDES_PER_BOM. */
      maxRefdes?: number;
    },
  ) {}

  async run(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    bomId: string,
    upload: BomImportUpload,
    options: { dryRun: boolean; decimal?: 'dot' | 'comma' },
    signal?: AbortSignal,
  ): Promise<BomImportReport> {
    const probe = await this.boms.bomsIn(access).find(bomId);
    // Parsed in the worker (its heap and time limits, as for parts) and read batch by batch: the
    // rows are never all held here, and the event loop serves others between batches.
    const { maxBytes, maxRows, timeoutMs, maxMemoryMb } = this.limits;
    const sheet = await openSpreadsheet(upload, {
      maxBytes,
      maxRows,
      timeoutMs,
      maxMemoryMb,
      handOver: true,
      signal,
    });
    upload.buffer = new Uint8Array(0); // the worker has it now
    try {
      return await this.read(actor, access, bomId, probe, sheet, options);
    } finally {
      sheet.close();
    }
  }

  private async read(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    bomId: string,
    probe: BomEntity,
    sheet: SpreadsheetStream,
    options: { dryRun: boolean; decimal?: 'dot' | 'comma' },
  ): Promise<BomImportReport> {
    const mapping = normaliseHeaders(sheet.headers, BOM_IMPORT_ALIASES);
    if (mapping.columns.childPartNumber === undefined || mapping.columns.qty === undefined) {
      throw new ValidationError(
        `The first row must name a child part number column (child_part_number, part_number, pn or child_pn) and a qty column (qty or quantity); found: ${sheet.headers.join(', ') || 'no headers'}`,
        [{ field: 'file', message: 'missing child_part_number or qty column' }],
      );
    }
    const cell = cellsOf(sheet.headers, mapping);
    const errors: ImportRowProblem[] = [];
    const warnings: ImportRowProblem[] = [];
    const invalid = new Set<number>();
    const fail = (row: number, field: BomImportField | 'file', message: string) => {
      invalid.add(row);
      errors.push({
        row,
        column: field === 'file' ? 'file' : (mapping.columns[field as BomImportField] ?? field),
        message,
      });
    };

    const assembly = (await this.boms.bomsIn(access).partsById([probe.assemblyPartId])).get(
      probe.assemblyPartId,
    );
    const assemblyNumber = assembly?.partNumber.toLowerCase() ?? '';
    const planned: PlannedLine[] = [];
    const openByLevel: (PlannedLine | undefined)[] = [];
    let skippedRows = 0;
    const decimal = options.decimal ?? 'dot';
    // Designators of the whole file, charged before each row's are expanded (20,000 rows of
    // R1-R10000 would otherwise be 2 x 10^8 strings). Past the budget the file is refused at once.
    const budget = this.limits.maxRefdes ?? MAX_REFDES_PER_BOM;
    const designators = { budget, left: budget, column: mapping.columns.refdes ?? 'refdes' };
    for await (const batch of sheet) {
      for (const problem of batch.cellErrors) fail(problem.row, 'file', problem.message);
      batch.rows.forEach((values, i) => {
        const row = batch.rowNumbers[i];
        const owner = cell(values, 'assembly');
        if (owner && owner.toLowerCase() !== assemblyNumber) {
          skippedRows++;
          return;
        }
        const line = readBomRow(values, row, { cell, fail, warnings, decimal, access, designators });
        if (!line) return;
        if (line.level > 1) {
          const parent = openByLevel[line.level - 1];
          if (!parent) {
            fail(row, 'level', `level ${line.level} has no row of level ${line.level - 1} above it`);
            return;
          }
          line.parentId = parent.id;
        }
        openByLevel[line.level] = line;
        openByLevel.length = line.level + 1;
        if (!invalid.has(row)) planned.push(line);
      });
    }
    const rowCount = sheet.rowCount;

    const work = async (manager: EntityManager): Promise<BomImportReport> => {
      const repo = this.boms.bomsIn(access, manager);
      const bom = options.dryRun ? await repo.find(bomId) : await this.boms.lockEditable(repo, bomId);
      // A dry run against a BOM that cannot change answers what the apply would: 409.
      if (options.dryRun) checkMove(bom.status, 'edit', `BOM revision ${bom.revision}`, 'revision');
      const numbers = [
        ...planned.map((l) => l.partNumber),
        ...planned.flatMap((l) => l.alternates.map((a) => a.partNumber)),
      ];
      const parts = await repo.partsByNumber(numbers);
      for (const line of planned) {
        for (const alternate of line.alternates) {
          if (!parts.has(alternate.partNumber.toLowerCase()))
            fail(line.row, 'alternates', `alternate ${alternate.partNumber} is not a part of this workspace`);
        }
        if (line.partNumber.toLowerCase() === assemblyNumber)
          fail(line.row, 'childPartNumber', `${line.partNumber} is the assembly itself`);
      }
      const missing = [...new Set(planned.map((l) => l.partNumber))].filter(
        (pn) => !parts.has(pn.toLowerCase()),
      );
      const valid = rowCount - skippedRows - invalid.size;
      const report: BomImportReport = {
        importId: newId(),
        bomId,
        dryRun: options.dryRun,
        format: sheet.format,
        rows: rowCount,
        valid,
        errors: errors.sort((a, b) => a.row - b.row).slice(0, LISTED_PROBLEMS),
        errorCount: errors.length,
        warnings: warnings.slice(0, LISTED_PROBLEMS),
        lines: planned.filter((l) => !invalid.has(l.row)).length,
        createdParts: missing,
        skippedRows,
        ignoredColumns: [
          ...mapping.unknown.filter((h) => !DERIVED.has(h.toLowerCase().replace(/[\s_.-]+/g, ''))),
          ...mapping.duplicates.flatMap((d) => d.headers.slice(1)),
        ],
      };
      if (options.dryRun) return report;
      if (invalid.size > 0) {
        throw importRejected(invalid.size, report);
      }
      await writeBomLines(manager, repo, this.catalog, actor, bom, planned, parts, missing);
      await this.lines.checkNoCycle(manager, bom);
      await this.boms.emit(manager, access, actor, bom, 'imported', {
        importId: report.importId,
        lines: report.lines,
        createdParts: missing.length,
      });
      return report;
    };
    return options.dryRun ? work(this.dataSource.manager) : this.dataSource.transaction(work);
  }
}
