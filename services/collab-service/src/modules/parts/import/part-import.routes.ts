import { ErrorBodyDto, ImportPartsForm, ImportRejectedBody, ImportReport } from '@hwp/contracts';
import { AppError, type JobTimer, validateInput } from '@hwp/platform';
import { formFields, importSlot, spreadsheetUpload, theFile } from '../../../spreadsheets/upload';
import { fromBody, fromQuery } from '../../workspace-access/workspace-access';
import { memberRoute } from '../../workspace-access/workspace-route';
import type { PartImportService } from './part-import.service';

const FORM_SCHEMA = {
  type: 'object',
  required: ['file'],
  properties: {
    file: { type: 'string', format: 'binary', description: 'CSV (UTF-8) or XLSX, at most IMPORT_MAX_MB' },
    workspace: { type: 'string', description: 'Or the `workspace` query parameter' },
    dryRun: {
      type: 'string',
      enum: ['true', 'false'],
      description: '`true`: report only, write nothing (or the `dryRun` query parameter)',
    },
    decimal: {
      type: 'string',
      enum: ['dot', 'comma'],
      description:
        'CSV: the decimal separator of numeric cells, `dot` (default) or `comma` (`1234,5`); no thousands ' +
        'separators. Or the `decimal` query parameter.',
    },
  },
};

/** `POST /v1/parts/import` (section 4.6). */
export function importParts(imports: PartImportService, maxBytes: number, time: JobTimer) {
  return memberRoute({
    method: 'post',
    path: '/v1/parts/import',
    summary: 'Import parts from a CSV or XLSX file (dry run or atomic apply)',
    description:
      'Columns are matched case-insensitively, with the aliases of the document (part_number or pn, uom or unit ' +
      'or unit_of_measure, lifecycle or life_cycle, attributes or attrs or json, manufacturer_part_number or ' +
      'mpn, ...). Tags are comma or pipe separated, attributes a JSON object. A row whose part number exists ' +
      'updates that part (blank cells keep the stored value); a row that changes nothing is not written. ' +
      '`dryRun=true` (form field or query parameter) answers the report and writes nothing. Otherwise every row is written in one transaction, ' +
      'or, when any row has an error, none (400 with the report). Domain warnings (e.g. an electronic part ' +
      'without `package`) do not stop the import. The importing user gets `import.progress` events on the ' +
      'event stream. Files over IMPORT_MAX_MB or IMPORT_MAX_ROWS: 413; not CSV/XLSX, or a CSV that is not ' +
      'UTF-8: 415; formulas are never evaluated (the stored result is used; none stored: a row error). At most ' +
      'IMPORT_CONCURRENCY imports run per process; more wait up to IMPORT_QUEUE_WAIT_MS, then 503.',
    tags: ['parts'],
    role: 'engineer',
    workspace: (req) => fromQuery('workspace')(req) ?? fromBody('workspace')(req),
    before: [importSlot(imports), spreadsheetUpload(maxBytes)],
    bodyContent: { 'multipart/form-data': { schema: FORM_SCHEMA } },
    responses: {
      200: { description: 'The report (dry run: what an apply would do)', schema: ImportReport },
      400: {
        description: 'Rows with errors (nothing written; the report is in `report`), or an unreadable file',
        schema: ImportRejectedBody,
      },
      409: {
        description: 'Parts to update changed while the import ran; nothing written',
        schema: ErrorBodyDto,
      },
      413: { description: 'The file or its row count is over the limit', schema: ErrorBodyDto },
      415: {
        description: 'Not a CSV or XLSX file, a CSV not in UTF-8, or not multipart',
        schema: ErrorBodyDto,
      },
      503: { description: 'Too many imports are running (see Retry-After)', schema: ErrorBodyDto },
    },
    handler: async ({ user, workspace, req, res }) => {
      const file = theFile(req);
      const body = formFields(req);
      if ('dry_run' in body && !('dryRun' in body)) body.dryRun = body.dry_run;
      delete body.dry_run;
      // `?dryRun=true` is what many clients send; a query flag must never be ignored into an apply.
      const queryFlag = req.query.dryRun ?? req.query.dry_run;
      if (queryFlag !== undefined) {
        if ('dryRun' in body && body.dryRun !== queryFlag) {
          throw new AppError('validation_failed', 'dryRun differs between the form and the query', {
            errors: [{ field: 'dryRun', message: 'form and query disagree' }],
          });
        }
        body.dryRun = queryFlag;
      }
      if (req.query.decimal !== undefined && !('decimal' in body)) body.decimal = req.query.decimal;
      const form = await validateInput(ImportPartsForm, body, 'body');
      const aborted = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) aborted.abort(new Error('The client went away'));
      });
      try {
        const upload = { buffer: file.buffer, filename: file.originalname, contentType: file.mimetype };
        req.file = undefined; // the service lets go of the bytes once parsed; so should the request
        const dryRun = form.dryRun === 'true';
        const report = await time(dryRun ? 'parts_import_dry_run' : 'parts_import', () =>
          imports.run(user, workspace, upload, { dryRun, decimal: form.decimal }, aborted.signal),
        );
        res.json(report);
      } catch (error) {
        // A client that went away gets no answer (and the import was rolled back): nothing to report.
        if (aborted.signal.aborted) return;
        throw error;
      } finally {
        (res.locals.freeImportSlot as () => void)();
      }
    },
  });
}
