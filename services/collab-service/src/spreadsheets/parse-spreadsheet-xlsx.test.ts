import { deflateRawSync } from 'node:zlib';
import * as XLSX from 'xlsx';
import { MB, records, refusal } from '#test/parts-import-kit';
import { deflatedZeros, storedPart, workbook, XLSX_SKELETON, type ZipPart, zip } from '#test/spreadsheets';
import { parseSpreadsheet } from './parse-spreadsheet';
import * as workerLauncher from './worker-launcher';
import { inspectZip, ZipRejection } from './zip-inspect';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

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
