import { deflateRawSync } from 'node:zlib';
import { fakeOnly } from '@hwp/platform/test-kit';
import * as XLSX from 'xlsx';
import {
  deflatedZeros,
  storedPart,
  workbook,
  XLSX_SKELETON,
  type ZipPart,
  zip,
} from '../../../../test/support/spreadsheets';
import { parseJsonObject, splitTags } from './cell-values';
import { normaliseHeaders, PART_IMPORT_ALIASES } from './header-aliases';
import { type ParsedSheet, parseSpreadsheet, SpreadsheetError } from './parse-spreadsheet';
import * as workerLauncher from './worker-launcher';
import { inspectZip, ZipRejection } from './zip-inspect';

const MB = 1024 * 1024;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The rows as objects keyed by header, to compare against. */
const records = (sheet: ParsedSheet) =>
  sheet.rows.map((values) => Object.fromEntries(sheet.headers.map((header, i) => [header, values[i]])));

const csv = (text: string, filename = 'parts.csv', contentType = 'text/csv') =>
  parseSpreadsheet({ buffer: Buffer.from(text, 'utf8'), filename, contentType });

/** The SpreadsheetError a promise rejects with (fails the test when it resolves or throws another error). */
async function refusal(promise: Promise<unknown>): Promise<SpreadsheetError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof SpreadsheetError))
    throw new Error(`expected a SpreadsheetError, got ${String(error)}`);
  return error;
}

describe('parseSpreadsheet: CSV', () => {
  it('reads quoted fields, embedded newlines and a BOM, keyed by the original headers', async () => {
    const text =
      '\uFEFFPart Number,Name,Description,Tags,Attributes\r\n' +
      'P-1,"Bolt, M3","Line one\nLine ""two""", steel | fastener ,"{""material"":""steel""}"\r\n' +
      '\r\n' +
      ' P-2 ,Nut,,,\r\n';
    const sheet = await csv(text);

    expect(sheet.format).toBe('csv');
    expect(sheet.delimiter).toBe(',');
    expect(sheet.headers).toEqual(['Part Number', 'Name', 'Description', 'Tags', 'Attributes']);
    expect(sheet.rowCount).toBe(2);
    expect(records(sheet)[0]).toEqual({
      'Part Number': 'P-1',
      Name: 'Bolt, M3',
      Description: 'Line one\nLine "two"',
      Tags: 'steel | fastener',
      Attributes: '{"material":"steel"}',
    });
    expect(records(sheet)[1]).toEqual({
      'Part Number': 'P-2',
      Name: 'Nut',
      Description: '',
      Tags: '',
      Attributes: '',
    });
    // The quoted newline keeps record 2 one row; the blank record 3 is skipped.
    expect(sheet.rowNumbers).toEqual([2, 4]);
    expect(sheet.cellErrors).toEqual([]);

    const { columns, unknown } = normaliseHeaders(sheet.headers, PART_IMPORT_ALIASES);
    expect(columns).toEqual({
      partNumber: 'Part Number',
      name: 'Name',
      description: 'Description',
      tags: 'Tags',
      attributes: 'Attributes',
    });
    expect(unknown).toEqual([]);
    expect(splitTags(records(sheet)[0].Tags)).toEqual(['steel', 'fastener']);
    expect(parseJsonObject(records(sheet)[0].Attributes)).toEqual({ ok: true, value: { material: 'steel' } });
  });

  it('detects a ; delimiter and matches aliases in any case', async () => {
    const sheet = await csv(
      'PN;MPN;Unit_Cost;RoHS_Compliant;UNIT\nP-1;LM317T;"1.25";yes;pcs\nP-2;"A;B";0.5;n;each\n',
    );

    expect(sheet.delimiter).toBe(';');
    expect(records(sheet).map((row) => row.MPN)).toEqual(['LM317T', 'A;B']);
    expect(normaliseHeaders(sheet.headers, PART_IMPORT_ALIASES).columns).toEqual({
      partNumber: 'PN',
      manufacturerPartNumber: 'MPN',
      unitCost: 'Unit_Cost',
      rohsCompliant: 'RoHS_Compliant',
      uom: 'UNIT',
    });
  });

  it('detects a tab delimiter and reads a CSV sent as text/plain', async () => {
    const sheet = await csv('part_number\tname\nP-1\tWasher, flat\n', 'parts.csv', 'text/plain');
    expect(sheet.delimiter).toBe('\t');
    expect(records(sheet)).toEqual([{ part_number: 'P-1', name: 'Washer, flat' }]);
  });

  it('reads a single-column file', async () => {
    const sheet = await csv('pn\nP-1\nP-2\n');
    expect(records(sheet)).toEqual([{ pn: 'P-1' }, { pn: 'P-2' }]);
  });

  it('reports a value in a column without a header as a cell error, keeping the row', async () => {
    const sheet = await csv('pn,name\nP-1,Bolt,oops\n');
    expect(records(sheet)).toEqual([{ pn: 'P-1', name: 'Bolt' }]);
    expect(sheet.cellErrors).toEqual([
      { row: 2, column: 'C', message: 'Column C has a value but no header' },
    ]);
  });

  it('refuses a non-UTF-8 CSV with 415 naming the encoding problem', async () => {
    const latin1 = Buffer.concat([Buffer.from('pn,name\nP-1,Caf'), Buffer.from([0xe9]), Buffer.from('\n')]);
    const error = await refusal(
      parseSpreadsheet({ buffer: latin1, filename: 'parts.csv', contentType: 'text/csv' }),
    );
    expect(error.status).toBe(415);
    expect(error.code).toBe('unsupported_media_type');
    expect(error.detail).toMatch(/not UTF-8/);
  });

  it('refuses a UTF-16 CSV with 415', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('pn\r\nP-1\r\n', 'utf16le')]);
    const error = await refusal(parseSpreadsheet({ buffer: utf16, filename: 'parts.csv' }));
    expect([error.status, error.detail]).toEqual([415, expect.stringMatching(/UTF-16/)]);
  });

  it('refuses an unclosed quote with 400 naming the row', async () => {
    const error = await refusal(csv('pn,name\nP-1,ok\nP-2,"never closed\nP-3,x\n'));
    expect([error.status, error.detail]).toEqual([
      400,
      'Row 3 of the CSV file: a quoted field is never closed',
    ]);
  });

  it('refuses a header that appears twice with 400', async () => {
    const error = await refusal(csv('pn,name,pn\nP-1,a,b\n'));
    expect([error.status, error.detail]).toEqual([400, 'The header "pn" appears twice (columns A and C)']);
  });

  it('refuses an empty file and a file of blank lines with 400', async () => {
    const empty = await refusal(parseSpreadsheet({ buffer: Buffer.alloc(0), filename: 'parts.csv' }));
    expect([empty.status, empty.detail]).toEqual([400, 'The file is empty']);
    const blank = await refusal(csv('\n , \n\n'));
    expect([blank.status, blank.detail]).toEqual([400, 'The file is empty: it has no header row']);
  });

  it('accepts a header without data rows', async () => {
    const sheet = await csv('pn,name\n');
    expect([sheet.headers, sheet.rowCount, records(sheet)]).toEqual([['pn', 'name'], 0, []]);
  });
});

describe('parseSpreadsheet: XLSX', () => {
  it('reads the cached value of a formula and never evaluates one', async () => {
    const buffer = workbook(
      {
        A1: { t: 's', v: 'Part Number' },
        B1: { t: 's', v: 'Unit Cost' },
        C1: { t: 's', v: 'RoHS' },
        D1: { t: 's', v: 'Released' },
        A2: { t: 's', v: 'P-1' },
        // The cached 5 is returned: an evaluation would give 2.
        B2: { t: 'n', f: '1+1', v: 5 },
        C2: { t: 'b', v: true },
        D2: { t: 'n', v: 45292, z: 'yyyy-mm-dd' },
        A3: { t: 's', v: 'P-2' },
        B3: { t: 'n', f: '1+1' },
        C3: { t: 'n', v: 0.1 + 0.2 },
        D3: { t: 'e', v: 0x07 },
      },
      'A1:D3',
    );
    const sheet = await parseSpreadsheet({ buffer, filename: 'parts.xlsx', contentType: XLSX_TYPE });

    expect(sheet.format).toBe('xlsx');
    expect(sheet.sheetName).toBe('Parts');
    expect(sheet.headers).toEqual(['Part Number', 'Unit Cost', 'RoHS', 'Released']);
    expect(records(sheet)).toEqual([
      { 'Part Number': 'P-1', 'Unit Cost': '5', RoHS: 'true', Released: '2024-01-01' },
      { 'Part Number': 'P-2', 'Unit Cost': '', RoHS: '0.3', Released: '' },
    ]);
    expect(sheet.rowNumbers).toEqual([2, 3]);
    expect(sheet.cellErrors).toEqual([
      { row: 3, column: 'Unit Cost', message: expect.stringMatching(/formula without a saved value/) },
      { row: 3, column: 'Released', message: 'The cell holds the error value #DIV/0!' },
    ]);
  });

  it('reads the first sheet only, from a header below blank rows', async () => {
    const first: XLSX.WorkSheet = { '!ref': 'A3:B4', A3: { t: 's', v: 'pn' }, A4: { t: 's', v: 'P-9' } };
    const second: XLSX.WorkSheet = { '!ref': 'A1:A2', A1: { t: 's', v: 'other' }, A2: { t: 's', v: 'x' } };
    const buffer: Buffer = XLSX.write(
      { SheetNames: ['First', 'Second'], Sheets: { First: first, Second: second } },
      { type: 'buffer', bookType: 'xlsx' },
    );
    const sheet = await parseSpreadsheet({ buffer, filename: 'parts.xlsx' });
    expect([sheet.sheetName, sheet.headers, records(sheet), sheet.rowNumbers]).toEqual([
      'First',
      ['pn'],
      [{ pn: 'P-9' }],
      [4],
    ]);
  });

  it('refuses a zip bomb (200 MB of zeros in 200 KB) with 413 before parsing', async () => {
    const stored = await deflatedZeros(200 * MB);
    const bomb = zip([
      ...XLSX_SKELETON,
      { name: 'xl/worksheets/sheet1.xml', stored, method: 8, size: 200 * MB },
    ]);
    expect(bomb.length).toBeLessThan(1 * MB);

    // Refused from the ZIP headers alone: no worker is started, so nothing is inflated.
    const launches = jest.spyOn(workerLauncher, 'startParseWorker');
    try {
      const error = await refusal(parseSpreadsheet({ buffer: bomb, filename: 'bomb.xlsx' }));
      expect([error.status, error.code]).toEqual([413, 'payload_too_large']);
      expect(error.detail).toMatch(/zip bomb/);
      expect(launches).not.toHaveBeenCalled();
    } finally {
      launches.mockRestore();
    }
  });

  it('refuses a zip bomb whose headers understate the size with 413, in the worker', async () => {
    const stored = await deflatedZeros(200 * MB);
    const liar = zip([...XLSX_SKELETON, { name: 'xl/worksheets/sheet1.xml', stored, method: 8, size: 4096 }]);
    expect(inspectZip(liar)).toHaveLength(3);

    const error = await refusal(parseSpreadsheet({ buffer: liar, filename: 'bomb.xlsx' }));
    expect([error.status, error.detail]).toEqual([
      413,
      expect.stringMatching(/inflates beyond its declared 4096 bytes/),
    ]);
  });

  it('refuses an archive that inflates past the total limit with 413', async () => {
    const text = 'x'.repeat(2 * MB);
    const sheetXml: ZipPart = {
      name: 'xl/big.xml',
      stored: deflateRawSync(text),
      method: 8,
      size: text.length,
    };
    const error = await refusal(
      parseSpreadsheet(
        { buffer: zip([...XLSX_SKELETON, sheetXml]), filename: 'big.xlsx' },
        { maxUncompressedBytes: MB, maxCompressionRatio: 10_000 },
      ),
    );
    expect([error.status, error.detail]).toEqual([413, 'The XLSX file inflates to more than 1 MB']);
  });

  it('refuses a ZIP that is not a workbook with 415 and a broken ZIP with 400', async () => {
    const notWorkbook = await refusal(
      parseSpreadsheet({ buffer: zip([storedPart('readme.txt', 'hi')]), filename: 'parts.xlsx' }),
    );
    expect([notWorkbook.status, notWorkbook.code]).toEqual([415, 'unsupported_media_type']);

    const truncated = workbook({ A1: { t: 's', v: 'pn' } }, 'A1:A1').subarray(0, 200);
    const broken = await refusal(parseSpreadsheet({ buffer: truncated, filename: 'parts.xlsx' }));
    expect([broken.status, broken.detail]).toEqual([400, expect.stringMatching(/not a valid ZIP archive/)]);
  });

  it('refuses a legacy .xls and a password-protected workbook with 415', async () => {
    const ole = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]);
    const xls = await refusal(parseSpreadsheet({ buffer: ole, filename: 'parts.xls' }));
    expect([xls.status, xls.detail]).toEqual([415, expect.stringMatching(/\.xls files are not supported/)]);
    const locked = await refusal(parseSpreadsheet({ buffer: ole, filename: 'parts.xlsx' }));
    expect([locked.status, locked.detail]).toEqual([415, expect.stringMatching(/without a password/)]);
  });
});

describe('parseSpreadsheet: type, size and row limits', () => {
  const PNG = Buffer.from([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52,
  ]);

  it('refuses a PNG with 415, whatever it is called', async () => {
    for (const input of [
      { buffer: PNG, filename: 'logo.png', contentType: 'image/png' },
      { buffer: PNG, contentType: 'image/png' },
      { buffer: PNG, filename: 'parts.csv', contentType: 'image/png' },
      { buffer: PNG, filename: 'parts.csv', contentType: 'text/csv' },
      { buffer: PNG, filename: 'parts.xlsx' },
    ]) {
      const error = await refusal(parseSpreadsheet(input));
      expect([error.status, error.code]).toEqual([415, 'unsupported_media_type']);
    }
  });

  it('decides by content type when there is no file name', async () => {
    const sheet = await parseSpreadsheet({
      buffer: Buffer.from('pn\nP-1\n'),
      contentType: 'text/csv; charset=utf-8',
    });
    expect(records(sheet)).toEqual([{ pn: 'P-1' }]);
    const error = await refusal(parseSpreadsheet({ buffer: Buffer.from('pn\nP-1\n') }));
    expect(error.status).toBe(415);
  });

  it('accepts the content type Windows browsers send for .csv', async () => {
    const sheet = await csv('pn\nP-1\n', 'parts.csv', 'application/vnd.ms-excel');
    expect(records(sheet)).toEqual([{ pn: 'P-1' }]);
  });

  it('refuses a 60 MB file with 413 before parsing it', async () => {
    const error = await refusal(
      parseSpreadsheet({ buffer: Buffer.alloc(60 * MB, 0x61), filename: 'parts.csv' }),
    );
    expect([error.status, error.code]).toEqual([413, 'payload_too_large']);
    expect(error.detail).toBe('The file is 60 MB; the import limit is 50 MB');
  });

  it('refuses 200,001 data rows with 413 naming the limit', async () => {
    const rows = Array.from({ length: 200_001 }, (_, i) => `P-${i}`);
    const error = await refusal(csv(`pn\n${rows.join('\n')}\n`));
    expect([error.status, error.detail]).toEqual([
      413,
      'The file has more than 200,000 data rows (the import limit)',
    ]);
  });

  it('applies a custom row limit to XLSX too', async () => {
    const buffer = workbook(
      { A1: { t: 's', v: 'pn' }, A2: { t: 's', v: 'a' }, A3: { t: 's', v: 'b' }, A4: { t: 's', v: 'c' } },
      'A1:A4',
    );
    const error = await refusal(parseSpreadsheet({ buffer, filename: 'parts.xlsx' }, { maxRows: 2 }));
    expect([error.status, error.detail]).toEqual([
      413,
      'The file has more than 2 data rows (the import limit)',
    ]);
    expect((await parseSpreadsheet({ buffer, filename: 'parts.xlsx' }, { maxRows: 3 })).rowCount).toBe(3);
  });

  it('answers 413, not 500, when the worker runs out of time', async () => {
    // The limit's timer is the only fake one: the clock is moved past it while the worker has only
    // just been started, so the outcome does not depend on how fast this machine parses.
    fakeOnly(['setTimeout', 'clearTimeout']);
    try {
      const buffer = Buffer.from(`pn\n${'P-1\n'.repeat(100_000)}`);
      const parsing = refusal(parseSpreadsheet({ buffer, filename: 'parts.csv' }, { timeoutMs: 30_000 }));
      jest.advanceTimersByTime(30_000);
      const error = await parsing;
      expect([error.status, error.detail]).toEqual([413, expect.stringMatching(/took longer than 30 s/)]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('answers 413, not 500, when the worker runs out of memory', async () => {
    // 40 MB of CSV against a 64 MB heap. Far smaller heaps are not a graceful 413: a single allocation
    // beyond the heap limit plus V8's 16 MB grace aborts the whole process (nodejs/node#47224).
    const text = `pn,name\n${'P-123456,a part name of some length\n'.repeat(1_100_000)}`;
    const error = await refusal(
      parseSpreadsheet(
        { buffer: Buffer.from(text), filename: 'parts.csv' },
        { maxMemoryMb: 64, maxRows: 2_000_000 },
      ),
    );
    expect([error.status, error.detail]).toEqual([
      413,
      expect.stringMatching(/needs more than 64 MB of memory/),
    ]);
  });
});

describe('parseSpreadsheet: worker', () => {
  it('reports progress every N rows and at the end', async () => {
    const progress: number[] = [];
    const rows = Array.from({ length: 35 }, (_, i) => `P-${i}`).join('\n');
    const sheet = await parseSpreadsheet(
      { buffer: Buffer.from(`pn\n${rows}`), filename: 'parts.csv' },
      { progressEvery: 10, onProgress: (parsed) => progress.push(parsed) },
    );
    expect(sheet.rowCount).toBe(35);
    expect(progress).toEqual([10, 20, 30, 35]);
  });

  it('keeps the event loop serving timers while it parses 100,000 rows', async () => {
    const lines = Array.from(
      { length: 100_000 },
      (_, i) => `P-${i},Part ${i},"steel|fastener",${i % 7}.25,yes`,
    );
    const buffer = Buffer.from(`part_number,name,tags,unit_cost,rohs_compliant\n${lines.join('\n')}\n`);
    // Parsing on the event loop would hold every timer back until the result is there; in the worker,
    // a timer runs before it is. How often it runs depends on the machine, so only that it ran is
    // checked (bench/spreadsheet-parse measures the event-loop delay).
    let parsed = false;
    let timerRunsWhileParsing = 0;
    const timer = setInterval(() => {
      if (!parsed) timerRunsWhileParsing += 1;
    }, 1);
    try {
      const sheet = await parseSpreadsheet({ buffer, filename: 'parts.csv' }).finally(() => {
        parsed = true;
      });
      expect(sheet.rowCount).toBe(100_000);
      expect(records(sheet)[99_999]).toEqual({
        part_number: 'P-99999',
        name: 'Part 99999',
        tags: 'steel|fastener',
        unit_cost: '4.25',
        rohs_compliant: 'yes',
      });
    } finally {
      clearInterval(timer);
    }
    expect(timerRunsWhileParsing).toBeGreaterThan(0);
  });

  it('leaves the caller buffer intact (the worker gets a copy)', async () => {
    const buffer = Buffer.from('pn\nP-1\n');
    await parseSpreadsheet({ buffer, filename: 'parts.csv' });
    expect(buffer.toString()).toBe('pn\nP-1\n');
  });

  it('stops when the signal aborts', async () => {
    const controller = new AbortController();
    const parsing = parseSpreadsheet(
      { buffer: Buffer.from(`pn\n${'P-1\n'.repeat(100_000)}`), filename: 'parts.csv' },
      { signal: controller.signal },
    );
    controller.abort(new Error('client went away'));
    await expect(parsing).rejects.toThrow('client went away');
  });
});

describe('inspectZip', () => {
  it('accepts a workbook written by xlsx and lists its entries', () => {
    const entries = inspectZip(workbook({ A1: { t: 's', v: 'pn' } }, 'A1:A1'));
    expect(entries.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['[Content_Types].xml', 'xl/workbook.xml', 'xl/worksheets/sheet1.xml']),
    );
  });

  it('refuses local headers that disagree with the central directory', () => {
    const archive = zip(XLSX_SKELETON);
    archive.writeUInt32LE(999, 22); // the first local header's uncompressed size
    expect(() => inspectZip(archive)).toThrow(ZipRejection);
    expect(() => inspectZip(archive)).toThrow('local and central headers disagree for [Content_Types].xml');
  });

  it('refuses too many entries', () => {
    const parts = Array.from({ length: 5 }, (_, i) => storedPart(`f${i}`, 'x'));
    expect(() =>
      inspectZip(zip(parts), {
        maxEntries: 4,
        maxUncompressedBytes: MB,
        maxCompressionRatio: 100,
        ratioFloorBytes: MB,
      }),
    ).toThrow('The XLSX file has 5 entries (at most 4)');
  });
});
