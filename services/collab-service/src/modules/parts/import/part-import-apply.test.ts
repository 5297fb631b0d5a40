import type { ImportReport, PartDetail, PartList } from '@hwp/contracts';
import type { Team } from '#test/collab-test-kit';
import { csvOf, goodRow, type Row, usePartImportStack } from '#test/parts-import-kit';
import { workbook } from '#test/spreadsheets';

const { as, team, upload, partCount, historyState, openStream } = usePartImportStack();

/** 20 rows, each with exactly one problem, and the column it is reported in. */
const BAD: [Partial<Row>, string][] = [
  [{ 'Part Number': '' }, 'Part Number'],
  [{ 'Part Number': 'BAD PN' }, 'Part Number'],
  [{ Domain: 'hydraulic', attrs: '' }, 'Domain'],
  [{ 'Unit Cost': '12,50' }, 'Unit Cost'],
  [{ 'Unit Cost': '-3' }, 'Unit Cost'],
  [{ Currency: 'EURO' }, 'Currency'],
  [{ RoHS: 'maybe' }, 'RoHS'],
  [{ attrs: '{not json' }, 'attrs'],
  [{ attrs: '[1,2]' }, 'attrs'],
  [{ Domain: 'mechanical', attrs: '{"material":"steel","finish":"zinc"}' }, 'attrs'],
  [{ 'Part Number': 'IMP-00001' }, 'Part Number'],
  [{ lifecycle: 'released' }, 'lifecycle'],
  [{ lifecycle: 'retired' }, 'lifecycle'],
  [{ Name: '' }, 'Name'],
  [{ Name: 'n'.repeat(201) }, 'Name'],
  [{ Tags: `ok|${'t'.repeat(70)}` }, 'Tags'],
  [{ Domain: 'chemical', attrs: '{"cas_number":"50-00-1"}' }, 'attrs'],
  [{ Domain: 'electrical', attrs: '{"wire_gauge":"18","voltage":"12V"}' }, 'attrs'],
  [{ unit: 'u'.repeat(33) }, 'unit'],
  [{ 'Unit Cost': '1e30' }, 'Unit Cost'],
];

/** 1,000 rows; with `bad`, 20 of them (file rows listed in `badRows`) carry one problem each. */
function thousandRows(bad: boolean): { rows: Row[]; badRows: Map<number, string> } {
  const rows: Row[] = [];
  const badRows = new Map<number, string>();
  for (let i = 1; i <= 1000; i++) {
    const row: Row = { ...goodRow(i), lifecycle: '' };
    const slot = bad && i % 50 === 7 ? BAD[(i - 7) / 50] : undefined;
    if (slot) {
      Object.assign(row, slot[0]);
      badRows.set(i + 1, slot[1]); // + 1: the header is row 1
    }
    rows.push(row);
  }
  return { rows, badRows };
}

describe('parts import: dry run, atomic apply, idempotent re-import', () => {
  let t: Team;
  beforeAll(async () => {
    t = await team();
  });

  it('dry run reports exactly the 20 bad rows among 1,000 with their columns and writes nothing', async () => {
    const { rows, badRows } = thousandRows(true);
    const res = await upload(t.engineer, t.workspace, csvOf(rows), { dryRun: true });
    expect(res.status).toBe(200);
    const report = res.body as ImportReport;
    expect(report).toMatchObject({ dryRun: true, format: 'csv', rows: 1000, valid: 980, errorCount: 20 });
    expect(report.errors.map((e) => [e.row, e.column])).toEqual([...badRows.entries()]);
    for (const error of report.errors) expect(error.message.length).toBeGreaterThan(5);
    expect(report.errors.find((e) => e.column === 'Unit Cost')?.message).toMatch(/decimal separator/);
    expect(report.errors.find((e) => e.row === 508)?.message).toMatch(/already on row 2 of this file/);
    expect(report).toMatchObject({ created: 980, updated: 0, unchanged: 0, ignoredColumns: [] });
    expect(await partCount(t.id)).toBe(0);
  });

  it('takes dryRun=true from the query too, and refuses a form and a query that disagree', async () => {
    const file = csvOf([{ pn: 'Q-1', name: 'Query flag' }]);
    const send = (query: string, form?: string) => {
      const req = as(t.engineer).post(`/v1/parts/import?${query}`).field('workspace', t.workspace);
      if (form) req.field('dryRun', form);
      return req.attach('file', file, { filename: 'parts.csv', contentType: 'text/csv' });
    };
    const dry = await send('dryRun=true');
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, rows: 1, created: 1 });
    const conflicting = await send('dryRun=true', 'false');
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.errors).toEqual([{ field: 'dryRun', message: 'form and query disagree' }]);
    expect(await partCount(t.id)).toBe(0);
  });

  it('apply with errors answers 400 with the same report and writes nothing', async () => {
    const { rows } = thousandRows(true);
    const res = await upload(t.engineer, t.workspace, csvOf(rows));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.detail).toMatch(/20 of 1000 rows have errors; nothing was imported/);
    expect(res.body.report).toMatchObject({ dryRun: false, rows: 1000, valid: 980, errorCount: 20 });
    expect(await partCount(t.id)).toBe(0);
  });

  it('a bad row near the end of a large file rolls back the batches already written before it', async () => {
    const rows: Row[] = Array.from({ length: 6_000 }, (_, i) => ({ ...goodRow(i + 1), lifecycle: '' }));
    rows[5_400] = { ...rows[5_400], Currency: 'EURO' };
    const res = await upload(t.engineer, t.workspace, csvOf(rows));
    expect(res.status).toBe(400);
    expect(res.body.report).toMatchObject({ rows: 6_000, valid: 5_999, errorCount: 1 });
    expect(res.body.report.errors).toEqual([
      { row: 5_402, column: 'Currency', message: 'EURO is not an ISO 4217 currency code' },
    ]);
    expect(await partCount(t.id)).toBe(0);
    expect((await historyState(t.id)).history).toBe(0);
  });

  it('stores backslashes, quotes, tabs and line breaks of cells, tags and attributes as they were', async () => {
    const w = await team();
    const rows = [
      {
        pn: 'ESC-1',
        name: 'Bolt \\ "M4"',
        description: 'first line\n\tsecond, indented',
        tags: 'a"b|c\\d|{e}',
        attributes: JSON.stringify({ note: 'x\\y\nz\t', 'key "q"': ['\\N', '\\.'] }),
      },
    ];
    const res = await upload(w.engineer, w.workspace, csvOf(rows));
    expect([res.status, res.body.created]).toEqual([200, 1]);
    const found = await as(w.viewer).get('/v1/parts').query({ workspace: w.workspace, q: 'ESC-1' });
    const part = (found.body as PartList).items[0];
    expect(part).toMatchObject({
      name: 'Bolt \\ "M4"',
      description: 'first line\n\tsecond, indented',
      tags: ['a"b', 'c\\d', '{e}'],
      attributes: { note: 'x\\y\nz\t', 'key "q"': ['\\N', '\\.'] },
    });
  });

  it('refuses NUL characters: a CSV holding one as binary, an XLSX cell or attribute JSON as row errors', async () => {
    const binary = await upload(t.engineer, t.workspace, csvOf([{ pn: 'NUL-0', name: 'a\u0000b' }]));
    expect([binary.status, binary.body.code]).toEqual([415, 'unsupported_media_type']);

    // XLSX stores U+0000 as the escape _x0000_, which the reader turns back into the character.
    const file = workbook(
      {
        A1: { t: 's', v: 'pn' },
        B1: { t: 's', v: 'name' },
        C1: { t: 's', v: 'attributes' },
        A2: { t: 's', v: 'NUL-1' },
        B2: { t: 's', v: 'a\u0000b' },
        A3: { t: 's', v: 'NUL-2' },
        B3: { t: 's', v: 'fine' },
        C3: { t: 's', v: '{"note":"x\\u0000y"}' },
        A4: { t: 's', v: 'NUL-3' },
        B4: { t: 's', v: 'fine too' },
      },
      'A1:C4',
    );
    const res = await upload(t.engineer, t.workspace, file, {
      filename: 'parts.xlsx',
      contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    });
    expect(res.status).toBe(400);
    expect(res.body.report.errors).toEqual([
      {
        row: 2,
        column: 'name',
        message: 'The cell contains a NUL character (U+0000), which no text field can hold',
      },
      {
        row: 3,
        column: 'attributes',
        message: 'Attributes may not contain the NUL character (\\u0000), which the database cannot store',
      },
    ]);
    expect(await partCount(t.id)).toBe(0);
  });

  it('a clean file applies every row; importing it again changes nothing; a changed row updates its part', async () => {
    const { rows } = thousandRows(false);
    const first = await upload(t.engineer, t.workspace, csvOf(rows));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ dryRun: false, rows: 1000, valid: 1000, created: 1000, updated: 0 });
    expect(first.body.warningCount).toBe(0);
    expect(await partCount(t.id)).toBe(1000);

    const found = await as(t.viewer).get('/v1/parts').query({ workspace: t.workspace, q: 'IMP-00002' });
    const part = (found.body as PartList).items[0];
    expect(part).toMatchObject({
      partNumber: 'IMP-00002',
      name: 'Imported part 2',
      domain: 'electronic',
      uom: 'each',
      tags: ['alpha', 'gamma'],
      attributes: { package: '0603', value: '2R', voltage_rating: '50V' },
      unitCost: 2.25,
      currency: 'EUR',
      rohsCompliant: true,
      manufacturerPartNumber: 'MPN-2',
      lifecycle: 'prototype',
    });

    const before = await historyState(t.id);
    const again = await upload(t.engineer, t.workspace, csvOf(rows));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: 0, updated: 0, unchanged: 1000, errorCount: 0 });
    expect(await historyState(t.id)).toEqual(before);

    rows[1] = { ...rows[1], Name: 'Renamed by import', Tags: 'alpha' };
    const changed = await upload(t.engineer, t.workspace, csvOf(rows));
    expect(changed.body).toMatchObject({ created: 0, updated: 1, unchanged: 999 });
    const detail = (await as(t.viewer).get(`/v1/parts/${part.id}`).query({ workspace: t.workspace }))
      .body as PartDetail;
    expect(detail.name).toBe('Renamed by import');
    expect(detail.history.map((h) => h.action)).toEqual(['import.created', 'import.updated']);
    // The creation entry names the first import and row, with the values the part was created with.
    expect(detail.history[0]).toEqual({
      id: part.id,
      actor: detail.history[1].actor,
      at: part.createdAt,
      action: 'import.created',
      changes: {
        partNumber: 'IMP-00002',
        name: 'Imported part 2',
        domain: 'electronic',
        lifecycle: 'prototype',
        import: { id: first.body.importId, row: 3 },
      },
    });
    expect(detail.history[1]).toMatchObject({
      actor: t.engineer.user.email
        .split('@')[0]
        .toLowerCase()
        .replace(/[^a-z0-9._-]/g, ''),
      changes: {
        name: { from: 'Imported part 2', to: 'Renamed by import' },
        tags: { from: ['alpha', 'gamma'], to: ['alpha'] },
        import: { row: 3 },
      },
    });
  });

  it('matches part numbers case-insensitively, keeps blank cells, and lets a manager move the lifecycle', async () => {
    const rows = [{ pn: 'imp-00005', life_cycle: 'Released', description: 'now released', 'Unit Cost': '' }];
    const denied = await upload(t.engineer, t.workspace, csvOf(rows), { dryRun: true });
    expect(denied.body.errors).toEqual([
      { row: 2, column: 'life_cycle', message: 'Changing the lifecycle needs the manager role' },
    ]);
    const res = await upload(t.manager, t.workspace, csvOf(rows));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ updated: 1, created: 0 });
    const found = (await as(t.viewer).get('/v1/parts').query({ workspace: t.workspace, q: 'IMP-00005' }))
      .body as PartList;
    expect(found.items[0]).toMatchObject({
      partNumber: 'IMP-00005',
      lifecycle: 'released',
      description: 'now released',
      unitCost: 5.25,
    });
    const back = await upload(t.manager, t.workspace, csvOf([{ pn: 'IMP-00005', lifecycle: 'prototype' }]), {
      dryRun: true,
    });
    expect(back.body.errors[0].message).toMatch(/cannot move from released to prototype/);
  });

  it('reports electronic template gaps as warnings and imports the rows', async () => {
    const rows = [
      { pn: 'WARN-1', name: 'Resistor', domain: 'electronic', attributes: '{"value":"10k"}' },
      { pn: 'WARN-2', name: 'Cap', domain: 'Electronic', 'Extra Column': 'x' },
    ];
    const res = await upload(t.engineer, t.workspace, csvOf(rows));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      created: 2,
      errorCount: 0,
      warningCount: 5,
      ignoredColumns: ['Extra Column'],
    });
    expect(res.body.warnings[0]).toEqual({
      row: 2,
      column: 'attributes',
      message: 'package is missing (electronic template)',
    });
  });

  it('sends import.progress to the importer only and a part event to the workspace', async () => {
    const [mine, theirs] = await Promise.all([
      openStream(t.engineer, t.workspace),
      openStream(t.viewer, t.workspace),
    ]);
    const rows = Array.from({ length: 30 }, (_, i) => ({ pn: `EV-${i}`, name: `Event part ${i}` }));
    const res = await upload(t.engineer, t.workspace, csvOf(rows));
    expect(res.status).toBe(200);
    const done = await mine.waitFor((e) => e.type === 'import.progress' && e.data.phase === 'done');
    expect(done.data).toMatchObject({ importId: res.body.importId, kind: 'parts', total: 30, created: 30 });
    const phases = mine.of('import.progress').map((e) => e.data.phase);
    expect(phases).toEqual(['parsing', 'checking', 'writing', 'done']);
    const part = await theirs.waitFor((e) => e.type === 'part' && e.data.action === 'imported');
    expect(part.data).toMatchObject({ importId: res.body.importId, created: 30, updated: 0 });
    expect(theirs.of('import.progress')).toEqual([]);
  });
});
