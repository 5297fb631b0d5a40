import {
  BomImportRejectedBody,
  BomImportReport,
  BomWorkspaceQuery,
  ErrorBodyDto,
  ImportBomForm,
} from '@hwp/contracts';
import { AppError, binaryResponse, type JobTimer, validateInput } from '@hwp/platform';
import type { Request, Response } from 'express';
import {
  formFields,
  type ImportSlots,
  importSlot,
  spreadsheetUpload,
  theFile,
} from '../../../spreadsheets/upload';
import { fromBody, fromResource } from '../../workspace-access/workspace-access';
import { memberRoute, readRoute } from '../../workspace-access/workspace-route';
import type { WorkspaceScope } from '../../workspace-access/workspace-scope';
import {
  erpRows,
  exportEtag,
  hierarchicalRows,
  lastModified,
  notModified,
  streamCsv,
  streamXlsx,
} from '../bom-export';
import type { BomImportService } from '../bom-import.service';
import type { BomsService } from '../boms.service';
import { NOT_FOUND, TAGS } from './bom-routing';

type Format = 'csv' | 'xlsx' | 'erp.csv';

const CONTENT_TYPES: Record<Format, string> = {
  csv: 'text/csv; charset=utf-8',
  'erp.csv': 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** The file name of an export: assembly, type and revision, in the characters every system takes. */
function fileName(partNumber: string, type: string, revision: string, format: Format): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_');
  return `${safe(partNumber)}_${type}_rev-${safe(revision)}${format === 'erp.csv' ? '_erp.csv' : `.${format}`}`;
}

async function sendExport(
  boms: BomsService,
  workspace: WorkspaceScope,
  bomId: string,
  format: Format,
  req: Request,
  res: Response,
): Promise<void> {
  const manager = boms.bomsIn(workspace).manager;
  // The validators come from the workspace's latest BOM or part change (one indexed read), so an
  // unchanged export answers 304 without being built or the BOM read again (the role check found it
  // in this workspace: fromResource).
  const change = await boms.treeChange(manager, workspace);
  const etag = exportEtag(format, bomId.toLowerCase(), change.id);
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'private, no-cache');
  if (change.at) res.setHeader('Last-Modified', lastModified(change.at));
  if (notModified(req.get('if-none-match'), etag, req.get('if-modified-since'), change.at)) {
    res.status(304).end();
    return;
  }
  const bom = await boms.bomsIn(workspace).find(bomId);
  const header = await boms.present(manager, workspace, bom);
  const walk = await boms.walk(manager, bom, header.assemblyPartNumber);
  const table = format === 'erp.csv' ? erpRows(walk) : hierarchicalRows(walk);
  res.setHeader('Content-Type', CONTENT_TYPES[format]);
  res.setHeader(
    'Content-Disposition',
    `attachment; filename="${fileName(header.assemblyPartNumber, header.type, header.revision, format)}"`,
  );
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (format === 'xlsx') {
    res.status(200);
    await streamXlsx(res, table, `${header.assemblyPartNumber} ${header.revision}`);
    return;
  }
  res.status(200);
  await streamCsv(res, table);
}

function exportRoute(boms: BomsService, format: Format, summary: string, description: string) {
  return readRoute({
    method: 'get',
    path: `/v1/boms/:id/export.${format}`,
    summary,
    description: `${description} Answers an \`ETag\` and a \`Last-Modified\` that change with any change to the workspace's BOMs or parts; a request with \`If-None-Match\` naming the ETag, or (without If-None-Match) \`If-Modified-Since\` not before Last-Modified, gets 304 (no body) without the export being built. Text cells starting with =, +, -, @, tab or CR get a leading apostrophe so spreadsheet programs never run them.`,
    tags: TAGS,
    workspace: fromResource('bom'),
    query: BomWorkspaceQuery,
    responses: {
      200: binaryResponse('The export', CONTENT_TYPES[format]),
      304: { description: 'Unchanged since the ETag in If-None-Match (or the date in If-Modified-Since)' },
      404: NOT_FOUND,
    },
    handler: ({ params, req, res, workspace }) => sendExport(boms, workspace, params.id, format, req, res),
  });
}

export const exportCsv = (boms: BomsService) =>
  exportRoute(
    boms,
    'csv',
    'The BOM as a hierarchical CSV',
    'Every level, depth first: `level`, `item_number` (1, 1.1, ...), part fields, quantities, units, designators ' +
      '(ranges compacted), the assembly and revision each line is stored in, costs, alternates ' +
      '(`PN (approval)`, comma-separated), ISO effectivity dates, serial and lot ranges, attributes as JSON, ' +
      'warnings. Importing it into a draft BOM gives the same lines.',
  );

export const exportXlsx = (boms: BomsService) =>
  exportRoute(
    boms,
    'xlsx',
    'The BOM as an XLSX workbook',
    'The content of export.csv as typed cells on one sheet, rows grouped in an outline by level.',
  );

export const exportErpCsv = (boms: BomsService) =>
  exportRoute(
    boms,
    'erp.csv',
    'The BOM flattened to parent/child pairs for ERP systems',
    'One row per parent/child pair at every level. `uom_code` uses UN/ECE Recommendation 20 codes (each -> EA ' +
      'kept as EA for pieces, m -> MTR, mm -> MMT, kg -> KGM, g -> GRM, l -> LTR, ml -> MLT, ft -> FOT, in -> INH, ' +
      'set -> SET, pair -> PR, ...); a unit not in the list is sent upper-cased. Cost columns (unit_cost, currency, ' +
      'extended_cost) appear when any line has a cost.',
  );

const FORM_SCHEMA = {
  type: 'object',
  required: ['file', 'bomId'],
  properties: {
    file: { type: 'string', format: 'binary', description: 'CSV (UTF-8) or XLSX, at most IMPORT_MAX_MB' },
    bomId: { type: 'string', format: 'uuid', description: 'The draft BOM whose lines the file replaces' },
    workspace: { type: 'string', description: 'Or the `workspace` query parameter' },
    dryRun: { type: 'string', enum: ['true', 'false'], description: '`true`: report only (or the query)' },
    decimal: { type: 'string', enum: ['dot', 'comma'], description: 'CSV decimal separator of qty' },
  },
};

export function importBom(
  bomImports: BomImportService,
  slots: ImportSlots,
  maxBytes: number,
  time: JobTimer,
) {
  return memberRoute({
    method: 'post',
    path: '/v1/boms/import',
    summary: 'Import the lines of a draft BOM from CSV or XLSX (dry run or atomic apply)',
    description:
      'Columns, case-insensitive: child_part_number (part_number, pn, child_pn) and qty (quantity) are required; ' +
      'uom (unit, unit_of_measure), refdes (reference_designators, reference, designators), notes (note, ' +
      'comment, comments) optional, and the columns of export.csv (level, assembly, alternates, effectivity, ' +
      'attributes) are read back. The file’s lines replace the BOM’s; missing child parts are created with ' +
      'domain `other`. Any row error writes nothing (400 with the report); `dryRun=true` only reports.',
    tags: TAGS,
    role: 'engineer',
    // The form's (or the query's) BOM names the workspace; a `workspace` sent as well must match.
    workspace: fromResource(
      'bom',
      (req) => fromBody('bomId')(req) ?? fromBody('bom_id')(req) ?? req.query.bomId,
    ),
    before: [importSlot(slots), spreadsheetUpload(maxBytes)],
    bodyContent: { 'multipart/form-data': { schema: FORM_SCHEMA } },
    responses: {
      200: { description: 'The report (dry run: what an apply would do)', schema: BomImportReport },
      400: {
        description: 'Rows with errors (nothing written), or an unreadable file',
        schema: BomImportRejectedBody,
      },
      404: NOT_FOUND,
      409: { description: 'The BOM is not a draft, or the lines would make a cycle', schema: ErrorBodyDto },
      413: { description: 'The file or its row count is over the limit', schema: ErrorBodyDto },
      415: { description: 'Not a CSV or XLSX file, or not multipart', schema: ErrorBodyDto },
      503: { description: 'Too many imports are running (see Retry-After)', schema: ErrorBodyDto },
    },
    handler: async ({ user, workspace, req, res }) => {
      try {
        const file = theFile(req);
        const body = formFields(req);
        for (const [snake, camel] of [
          ['dry_run', 'dryRun'],
          ['bom_id', 'bomId'],
        ]) {
          if (snake in body && !(camel in body)) body[camel] = body[snake];
          delete body[snake];
        }
        for (const name of ['dryRun', 'bomId', 'decimal']) {
          const fromUrl = req.query[name];
          if (fromUrl === undefined) continue;
          if (name in body && body[name] !== fromUrl)
            throw new AppError('validation_failed', `${name} differs between the form and the query`);
          body[name] = fromUrl;
        }
        const form = await validateInput(ImportBomForm, body, 'body');
        const upload = { buffer: file.buffer, filename: file.originalname, contentType: file.mimetype };
        req.file = undefined;
        const dryRun = form.dryRun === 'true';
        // A client that goes away stops the parse worker (and rolls an apply back).
        const aborted = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) aborted.abort(new Error('The client went away'));
        });
        try {
          res.json(
            await time(dryRun ? 'bom_import_dry_run' : 'bom_import', () =>
              bomImports.run(
                user,
                workspace,
                form.bomId,
                upload,
                { dryRun, decimal: form.decimal },
                aborted.signal,
              ),
            ),
          );
        } catch (error) {
          if (aborted.signal.aborted) return; // nobody to answer
          throw error;
        }
      } finally {
        (res.locals.freeImportSlot as () => void)();
      }
    },
  });
}
