import { once } from 'node:events';
import { PassThrough, type Writable } from 'node:stream';
import { ZipFile } from 'yazl';

/** A cell of a written sheet: text, a number, or empty. */
export type SheetCell = string | number | null;

/** `&`, `<`, `>` and `"` as XML entities; characters XML 1.0 cannot hold at all are dropped. */
function xml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
}

/** A column's letters: A ... Z, AA, ... */
function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** A cell at `ref` (A1); an empty one is left out, as spreadsheet programs write them. */
function cellXml(cell: SheetCell, ref: string): string {
  if (cell === null || (typeof cell === 'number' && !Number.isFinite(cell))) return '';
  if (typeof cell === 'number') return `<c r="${ref}"><v>${cell}</v></c>`;
  return `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${xml(cell)}</t></is></c>`;
}

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
  '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
  '</Types>';
const ROOT_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>' +
  '</Relationships>';
const WORKBOOK_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>' +
  '</Relationships>';
const workbook = (sheetName: string) =>
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">' +
  `<sheets><sheet name="${xml(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`;

export interface SheetWriter {
  /** Adds a row; `outline` (0-7) groups it under the rows above it. Resolves when there is room for more. */
  row(cells: readonly SheetCell[], outline?: number): Promise<void>;
  /** Writes the end of the workbook; resolves when the last byte has been handed to `out` (or it closed). */
  end(): Promise<void>;
}

/** Rows buffered before they go to the zip as one piece. */
const ROWS_PER_WRITE = 200;

/**
 * A one-sheet XLSX workbook (Office Open XML, SpreadsheetML: inline strings, numbers, an outline)
 * written to `out` as rows come: the sheet goes through a deflating zip stream (yazl), so memory
 * holds a few hundred rows, not the sheet, and `row` waits while `out` is full. SheetJS builds the
 * whole workbook in memory and exceljs's streaming writer depends on a package without a licence.
 */
export function sheetWriter(out: Writable, sheetName: string, columnWidths: readonly number[]): SheetWriter {
  const zip = new ZipFile();
  const sheet = new PassThrough();
  const name = sheetName.replace(/[\\/?*[\]:]/g, '_').slice(0, 31) || 'Sheet1';
  zip.addBuffer(Buffer.from(CONTENT_TYPES), '[Content_Types].xml');
  zip.addBuffer(Buffer.from(ROOT_RELS), '_rels/.rels');
  zip.addBuffer(Buffer.from(workbook(name)), 'xl/workbook.xml');
  zip.addBuffer(Buffer.from(WORKBOOK_RELS), 'xl/_rels/workbook.xml.rels');
  zip.addReadStream(sheet, 'xl/worksheets/sheet1.xml');
  zip.end();
  zip.outputStream.pipe(out);
  // A client that goes away ends the wait for room or for the end: nothing is left waiting on it.
  const closed = once(out, 'close').then(() => {
    sheet.destroy();
    zip.outputStream.unpipe(out);
  });
  const done = Promise.race([once(zip.outputStream, 'end'), closed]);

  let pending =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
    '<sheetPr><outlinePr summaryBelow="0"/></sheetPr>' +
    `<cols>${columnWidths.map((w, i) => `<col min="${i + 1}" max="${i + 1}" width="${w}" customWidth="1"/>`).join('')}</cols>` +
    '<sheetData>';
  let rows = 0;
  const columns: string[] = [];
  const flush = async () => {
    const ok = sheet.write(pending);
    pending = '';
    if (!ok && !out.destroyed) await Promise.race([once(sheet, 'drain'), closed]);
  };
  return {
    async row(cells, outline = 0) {
      rows++;
      const level = outline > 0 ? ` outlineLevel="${Math.min(7, outline)}"` : '';
      let xmlCells = '';
      for (let i = 0; i < cells.length; i++) {
        columns[i] ??= columnName(i);
        xmlCells += cellXml(cells[i], `${columns[i]}${rows}`);
      }
      pending += `<row r="${rows}"${level}>${xmlCells}</row>`;
      if (rows % ROWS_PER_WRITE === 0) await flush();
    },
    async end() {
      pending += '</sheetData></worksheet>';
      await flush();
      if (out.destroyed) return;
      sheet.end();
      await done;
    },
  };
}
