import { csv, records, refusal } from '#test/parts-import-kit';
import { PART_IMPORT_ALIASES } from '../modules/parts/import/header-aliases';
import { parseJsonObject, splitTags } from './cell-values';
import { normaliseHeaders } from './headers';
import { parseSpreadsheet } from './parse-spreadsheet';

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
