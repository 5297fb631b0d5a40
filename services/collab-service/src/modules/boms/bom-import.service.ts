import {
  type AlternateApproval,
  type BomImportReport,
  type ImportRowProblem,
  MAX_REFDES_PER_BOM,
  PART_NUMBER_PATTERN,
} from '@hwp/contracts';
import { AppError, CopyFeed, CopyText, ForbiddenError, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import {
  normaliseHeaders,
  openSpreadsheet,
  parseDecimal,
  parseJsonObject,
  type SpreadsheetStream,
} from '../../spreadsheets';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { checkMove, type PartEntity, type PartsService } from '../parts';
import { atLeast } from '../workspace-access/workspace-access';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { BomAlternateEntity, type BomEntity, BomItemEntity } from './bom.entity';
import { unneutralise } from './bom-export';
import type { BomLinesService } from './bom-lines.service';
import type { BomsRepository } from './boms.repository';
import type { BomsService } from './boms.service';
import { checkEffectivity } from './effectivity';
import { countRefdes, expandRefdes, RefdesError } from './refdes';

/**
 * Columns of the BOM import (section 2.9; matching ignores case, spaces, `_`, `-`). Besides the
 * document's, the hierarchical export's columns are read back, so an export imports as the same BOM:
 * `level` nests a row under the row above it one level up, `assembly` tells lines of sub-assemblies'
 * own BOMs (skipped) from this BOM's, and effectivity, alternates and attributes come along.
 */
export const BOM_IMPORT_ALIASES = {
  childPartNumber: ['child_part_number', 'part_number', 'pn', 'child_pn'],
  qty: ['quantity'],
  uom: ['unit', 'unit_of_measure'],
  refdes: ['reference_designators', 'reference', 'designators'],
  notes: ['note', 'comment', 'comments'],
  level: ['bom_level'],
  assembly: ['parent_assembly'],
  name: ['part_name', 'description'],
  sortIndex: ['sort_index'],
  alternates: ['alternate_parts'],
  dateFrom: ['date_from', 'effective_from'],
  dateTo: ['date_to', 'effective_to'],
  serialFrom: ['serial_from'],
  serialTo: ['serial_to'],
  lotFrom: ['lot_from'],
  lotTo: ['lot_to'],
  attributes: ['attrs'],
} as const;
type Field = keyof typeof BOM_IMPORT_ALIASES;

/** Export columns computed from the rest: read by nobody, and not reported as unknown. */
const DERIVED = new Set(
  [
    'item_number',
    'extended_qty',
    'bom_revision',
    'unit_cost',
    'currency',
    'extended_cost',
    'extended_cost_currency',
    'warnings',
  ].map((h) => h.replace(/_/g, '')),
);

const LISTED = 1_000;

/** Lines sent to the COPY at a time. */
const COPY_BATCH_ROWS = 2_000;

interface PlannedLine {
  row: number;
  id: string;
  parentId: string | null;
  level: number;
  partNumber: string;
  name: string | null;
  qty: number;
  uom: string;
  refdes: string[];
  notes: string;
  sortIndex: number;
  attributes: Record<string, unknown>;
  effectivity: Pick<BomItemEntity, 'dateFrom' | 'dateTo' | 'serialFrom' | 'serialTo' | 'lotFrom' | 'lotTo'>;
  alternates: { partNumber: string; approval: AlternateApproval }[];
}

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
    const index = new Map<Field, number>();
    for (const [field, header] of Object.entries(mapping.columns) as [Field, string][])
      index.set(field, sheet.headers.indexOf(header));
    const cell = (values: string[], field: Field) => {
      const i = index.get(field);
      return i === undefined || i < 0 ? '' : unneutralise((values[i] ?? '').trim());
    };
    const errors: ImportRowProblem[] = [];
    const warnings: ImportRowProblem[] = [];
    const invalid = new Set<number>();
    const fail = (row: number, field: Field | 'file', message: string) => {
      invalid.add(row);
      errors.push({
        row,
        column: field === 'file' ? 'file' : (mapping.columns[field as Field] ?? field),
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
        const line = this.readRow(values, row, cell, fail, warnings, decimal, access, designators);
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
        errors: errors.sort((a, b) => a.row - b.row).slice(0, LISTED),
        errorCount: errors.length,
        warnings: warnings.slice(0, LISTED),
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
        throw new AppError(
          'validation_failed',
          `${invalid.size} of ${report.rows} rows have errors; nothing was imported (see report.errors)`,
          { extra: { report } },
        );
      }
      await this.write(manager, repo, actor, bom, planned, parts, missing);
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

  private readRow(
    values: string[],
    row: number,
    cell: (values: string[], field: Field) => string,
    fail: (row: number, field: Field, message: string) => void,
    warnings: ImportRowProblem[],
    decimal: 'dot' | 'comma',
    access: WorkspaceScope,
    designators: { budget: number; left: number; column: string },
  ): PlannedLine | null {
    const partNumber = cell(values, 'childPartNumber');
    if (!partNumber) fail(row, 'childPartNumber', 'required');
    else if (!PART_NUMBER_PATTERN.test(partNumber))
      fail(row, 'childPartNumber', 'not a part number (letters, digits and . _ / # + -, at most 64)');
    const qtyCell = parseDecimal(cell(values, 'qty'), decimal);
    let qty = 0;
    if (!qtyCell.ok) fail(row, 'qty', qtyCell.message);
    else if (qtyCell.value === undefined) fail(row, 'qty', 'required');
    else if (!(Number(qtyCell.value) > 0)) fail(row, 'qty', 'must be greater than 0');
    else qty = Number(qtyCell.value);
    const levelText = cell(values, 'level');
    const level = levelText === '' ? 1 : Number(levelText);
    if (!Number.isInteger(level) || level < 1 || level > 64)
      fail(row, 'level', 'must be a whole number from 1 to 64');
    const uom = (cell(values, 'uom') || 'each').toLowerCase();
    if (uom.length > 16) fail(row, 'uom', 'at most 16 characters');
    let refdes: string[] = [];
    const text = cell(values, 'refdes');
    try {
      const count = countRefdes(text);
      if (count > designators.left) {
        throw new ValidationError(
          `Row ${row}, column ${designators.column}: the file holds more than ${designators.budget} reference designators (ranges count their size); split the file into several imports`,
          [
            {
              field: 'file',
              message: `row ${row} (${designators.column}): the file holds more than ${designators.budget} reference designators`,
            },
          ],
        );
      }
      designators.left -= count;
      refdes = expandRefdes(text);
    } catch (error) {
      if (!(error instanceof RefdesError)) throw error;
      fail(row, 'refdes', error.message);
    }
    if (uom === 'each' && refdes.length > 0 && qty > 0 && refdes.length !== qty) {
      warnings.push({
        row,
        column: 'refdes',
        message: `${refdes.length} reference designators for a quantity of ${qty}`,
      });
    }
    const serial = (field: 'serialFrom' | 'serialTo') => {
      const value = cell(values, field);
      if (value === '') return null;
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) {
        fail(row, field, 'must be a whole number');
        return null;
      }
      return n;
    };
    const date = (field: 'dateFrom' | 'dateTo') => {
      const value = cell(values, field);
      if (value === '') return null;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value))) {
        fail(row, field, 'must be an ISO date (YYYY-MM-DD)');
        return null;
      }
      return value;
    };
    const effectivity = {
      dateFrom: date('dateFrom'),
      dateTo: date('dateTo'),
      serialFrom: serial('serialFrom'),
      serialTo: serial('serialTo'),
      lotFrom: cell(values, 'lotFrom') || null,
      lotTo: cell(values, 'lotTo') || null,
    };
    const order = checkEffectivity(effectivity);
    if (order) fail(row, order.field as Field, order.message);
    const attributes = parseJsonObject(cell(values, 'attributes'));
    if (!attributes.ok) fail(row, 'attributes', attributes.message);
    const alternates: PlannedLine['alternates'] = [];
    for (const entry of cell(values, 'alternates')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)) {
      const match = /^(.*?)\s*\((approved|conditional|rejected)\)$/i.exec(entry);
      const approval = (match?.[2].toLowerCase() ?? 'conditional') as AlternateApproval;
      if (approval === 'approved' && !atLeast(access.role, 'manager')) {
        fail(row, 'alternates', 'only a manager or owner may import approved alternates');
      }
      alternates.push({ partNumber: unneutralise(match?.[1] ?? entry), approval });
    }
    const sortText = cell(values, 'sortIndex');
    const sortIndex = sortText === '' ? -1 : Number(sortText);
    if (!Number.isInteger(sortIndex) || sortIndex < -1) fail(row, 'sortIndex', 'must be a whole number');
    const notes = cell(values, 'notes');
    return {
      row,
      id: newId(),
      parentId: null,
      level: Number.isInteger(level) ? level : 1,
      partNumber,
      name: cell(values, 'name') || null,
      qty,
      uom,
      refdes,
      notes,
      sortIndex,
      attributes: (attributes.ok ? attributes.value : undefined) ?? {},
      effectivity,
      alternates,
    };
  }

  private async write(
    manager: EntityManager,
    repo: BomsRepository,
    actor: CollabUserEntity,
    bom: BomEntity,
    planned: PlannedLine[],
    parts: Map<string, PartEntity>,
    missing: string[],
  ): Promise<void> {
    const created = await this.catalog.createFor(
      repo.scope,
      actor,
      missing.map((partNumber) => {
        const line = planned.find((l) => l.partNumber.toLowerCase() === partNumber.toLowerCase());
        return { partNumber, name: (line?.name ?? partNumber).slice(0, 200), uom: line?.uom ?? 'each' };
      }),
      { source: 'bom-import', bomId: bom.id },
    );
    for (const part of created) parts.set(part.partNumber.toLowerCase(), part);
    const now = new Date();
    await manager.delete(BomItemEntity, { bomId: bom.id });
    // The lines go in with one COPY (a 100,000-line file is one statement's worth of bytes, not 200
    // INSERTs of 500 rows with 19 parameters each); parents come before the lines nested under them,
    // and the foreign keys are checked at the end of the statement anyway.
    const feed = await CopyFeed.open(
      manager,
      `COPY bom_items (id, bom_id, parent_item_id, child_part_id, qty, uom, refdes, notes, sort_index, attributes,
        date_from, date_to, serial_from, serial_to, lot_from, lot_to, created_at, updated_at) FROM STDIN`,
    );
    const text = new CopyText();
    const stamp = now.toISOString();
    for (let index = 0; index < planned.length; index++) {
      const line = planned[index];
      const e = line.effectivity;
      text.add([
        line.id,
        bom.id,
        line.parentId,
        parts.get(line.partNumber.toLowerCase())?.id,
        line.qty,
        line.uom,
        line.refdes,
        line.notes,
        line.sortIndex >= 0 ? line.sortIndex : index,
        line.attributes,
        e.dateFrom,
        e.dateTo,
        e.serialFrom,
        e.serialTo,
        e.lotFrom,
        e.lotTo,
        stamp,
        stamp,
      ]);
      if (text.rows === COPY_BATCH_ROWS) {
        await feed.write(text.bytes());
        text.clear();
      }
    }
    if (text.rows > 0) await feed.write(text.bytes());
    await feed.end();
    const alternates = planned.flatMap((line) =>
      line.alternates.map((a, position) => ({
        itemId: line.id,
        partId: parts.get(a.partNumber.toLowerCase())?.id as string,
        position,
        approval: a.approval,
        rationale: '',
        proposedBy: actor.id,
        approvedBy: a.approval === 'approved' ? actor.id : null,
      })),
    );
    if (alternates.length > 0) await manager.insert(BomAlternateEntity, alternates);
    if (alternates.some((a) => a.approval === 'approved') && !atLeast(repo.scope.role, 'manager'))
      throw new ForbiddenError('Only a manager or owner may approve an alternate');
  }
}
