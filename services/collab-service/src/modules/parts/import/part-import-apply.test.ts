import type { ImportReport, PartDetail, PartList } from '@hwp/contracts';
import type { Stack, Team } from '../../../../test/support/collab-test-kit';
import { csvOf, usePartImportStack } from '../../../../test/support/parts-import-kit';
import { workbook } from '../../../../test/support/spreadsheets';

let stack: Stack;
const { as, team, upload, partCount, openStream } = usePartImportStack((running) => {
  stack = running.stack;
});

type Row = Record<string, string>;

/** A valid row `i`: varied domains, tags, attributes, costs. */
function goodRow(i: number): Row {
  const domain = ['other', 'mechanical', 'electronic', 'chemical'][i % 4];
  const attributes =
    domain === 'mechanical'
      ? { material: 'steel', finish: 'zinc', tolerance: '0.1' }
      : domain === 'electronic'
        ? { package: '0603', value: `${i}R`, voltage_rating: '50V' }
        : domain === 'chemical'
          ? { cas_number: '7732-18-5', concentration: '99%', hazard_class: 'none' }
          : {};
  return {
    'Part Number': `IMP-${String(i).padStart(5, '0')}`,
    Name: `Imported part ${i}`,
    Domain: domain,
    unit: 'each',
    Tags: i % 2 ? 'alpha|beta' : 'alpha, gamma',
    attrs: JSON.stringify(attributes),
    'Unit Cost': `${(i % 97) + 0.25}`,
    Currency: 'EUR',
    RoHS: i % 3 ? 'yes' : 'no',
    MPN: `MPN-${i}`,
  };
}

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

/** Whether an import is looking its rows' stored parts up now. */
async function importLookingUp(): Promise<boolean> {
  const [row] = await stack.collab.deps.dataSource.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE '%FROM unnest($2::text[]) AS k(key)%' AND state = 'active' AND pid <> pg_backend_pid()`,
  );
  return row.n > 0;
}

/** Whether an import's COPY into the parts table is running now. */
async function importWriting(): Promise<boolean> {
  const [row] = await stack.collab.deps.dataSource.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE 'COPY parts %' AND state = 'active'`,
  );
  return row.n > 0;
}

async function historyState(workspaceId: string) {
  const [row] = await stack.collab.deps.dataSource.query(
    `SELECT count(h.*)::int AS history, max(p.updated_at)::text AS updated
       FROM parts p LEFT JOIN part_history h ON h.part_id = p.id WHERE p.workspace_id = $1`,
    [workspaceId],
  );
  return row as { history: number; updated: string };
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

  it('mixes new and changed parts across many batches: each counted, written and recorded once', async () => {
    const w = await team();
    const rows: Row[] = Array.from({ length: 3_000 }, (_, i) => ({ ...goodRow(i + 1), lifecycle: '' }));
    const first = await upload(w.engineer, w.workspace, csvOf(rows.slice(0, 1_500)));
    expect(first.body).toMatchObject({ created: 1_500 });
    for (let i = 0; i < 1_500; i += 3) rows[i] = { ...rows[i], Name: `Renamed ${i}` };
    const res = await upload(w.engineer, w.workspace, csvOf(rows));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows: 3_000, created: 1_500, updated: 500, unchanged: 1_000 });
    expect(await partCount(w.id)).toBe(3_000);
    // A history row per update; each created part names the import and the file row that created it.
    expect((await historyState(w.id)).history).toBe(500);
    const origins = await stack.collab.deps.dataSource.query(
      `SELECT import_id AS "importId", count(*)::int AS parts,
              count(*) FILTER (WHERE import_row = substring(part_number FROM 5)::int + 1)::int AS "rowsRight"
         FROM parts WHERE workspace_id = $1 GROUP BY import_id ORDER BY count(*)`,
      [w.id],
    );
    expect(origins).toEqual(
      expect.arrayContaining([
        { importId: first.body.importId, parts: 1_500, rowsRight: 1_500 },
        { importId: res.body.importId, parts: 1_500, rowsRight: 1_500 },
      ]),
    );
    const renamed = await as(w.viewer).get('/v1/parts').query({ workspace: w.workspace, q: 'IMP-01498' });
    expect(renamed.body.items[0].name).toBe('Renamed 1497');
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

  it('numbers under the workspace rules move the counters past the highest one used, across batches', async () => {
    const w = await team();
    await as(w.manager)
      .post(`/v1/workspaces/${w.workspace}/bom-settings`)
      .send({
        numbering_rules: { other: { prefix: 'N-', width: 5 }, mechanical: { prefix: 'M-', width: 5 } },
      })
      .expect(200);
    const mechanical = JSON.stringify({ material: 'steel', finish: 'zinc', tolerance: '0.1' });
    // 5,000 rows over several write batches; each domain's highest number comes in the last rows.
    const rows: Row[] = Array.from({ length: 5000 }, (_, i) =>
      i % 5 === 4
        ? {
            'Part Number': `M-${String((i + 1) / 5).padStart(5, '0')}`,
            Name: `m${i}`,
            Domain: 'mechanical',
            attrs: mechanical,
          }
        : {
            'Part Number': `N-${String(i - Math.floor(i / 5) + 1).padStart(5, '0')}`,
            Name: `n${i}`,
            Domain: 'other',
            attrs: '',
          },
    );
    const res = await upload(w.engineer, w.workspace, csvOf(rows));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 5000, errorCount: 0 });
    const counters = await stack.collab.deps.dataSource.query(
      'SELECT domain, last_value::int AS last FROM part_number_counters WHERE workspace_id = $1 ORDER BY domain',
      [w.id],
    );
    expect(counters).toEqual([
      { domain: 'mechanical', last: 1000 },
      { domain: 'other', last: 4000 },
    ]);
    const next = await as(w.engineer)
      .post('/v1/parts')
      .send({ workspace: w.workspace, name: 'next' })
      .expect(201);
    expect(next.body.partNumber).toBe('N-04001');
  });

  it('a part created while a first import fills an empty workspace: one of the two wins, nothing half-written', async () => {
    const w = await team();
    const rows: Row[] = Array.from({ length: 20_000 }, (_, i) => ({ ...goodRow(i + 1), lifecycle: '' }));
    const late = rows[19_000]['Part Number'];
    // `then` sends the request now (supertest sends when awaited).
    const importing = upload(w.engineer, w.workspace, csvOf(rows)).then((res) => res);
    // Sent once the import is writing (it found the workspace empty) and before it commits.
    const deadline = Date.now() + 20_000;
    while (!(await importWriting()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(Date.now()).toBeLessThan(deadline);
    const created = await as(w.engineer)
      .post('/v1/parts')
      .send({ workspace: w.workspace, partNumber: late, name: 'Made by hand', domain: 'other' });
    const imported = await importing;
    const statuses = [imported.status, created.status].sort();
    // The import either took the number first (the create waited for it, then 409) or met the
    // committed part at its write (409, rolled back whole).
    expect([
      [200, 409],
      [201, 409],
    ]).toContainEqual(statuses);
    const byNumber = await stack.collab.deps.dataSource.query(
      'SELECT name FROM parts WHERE workspace_id = $1 AND lower(part_number) = lower($2)',
      [w.id, late],
    );
    expect(byNumber).toHaveLength(1);
    if (imported.status === 200) {
      expect(imported.body).toMatchObject({ created: 20_000 });
      expect(await partCount(w.id)).toBe(20_000);
    } else {
      expect(imported.body.code).toBe('conflict');
      expect(imported.body.detail).toContain(late.toLowerCase());
      expect(byNumber[0].name).toBe('Made by hand');
      expect(await partCount(w.id)).toBe(1);
    }
  });

  it('a rename made while a later import runs keeps the history in the order of the changes', async () => {
    const w = await team();
    const rows: Row[] = Array.from({ length: 20_000 }, (_, i) => ({ ...goodRow(i + 1), lifecycle: '' }));
    const first = await upload(w.engineer, w.workspace, csvOf(rows));
    expect(first.body).toMatchObject({ created: 20_000 });
    // Right away, every page of the list gives the same total (the import analysed what it wrote).
    const totals = [];
    for (const page of [1, 200, 400, 401]) {
      const listed = await as(w.viewer)
        .get('/v1/parts')
        .query({ workspace: w.workspace, page, pageSize: 50 });
      totals.push((listed.body as PartList).total);
    }
    expect(totals).toEqual([20_000, 20_000, 20_000, 20_000]);
    const last = rows[19_999]['Part Number'];
    const found = await as(w.viewer).get('/v1/parts').query({ workspace: w.workspace, q: last });
    const part = (found.body as PartList).items[0];
    // The second import renames the last part; a person renames it while that import runs (it
    // reads the part after the rename, and writes its own rename on top of it).
    rows[19_999] = { ...rows[19_999], Name: 'Named by the second import' };
    const importing = upload(w.engineer, w.workspace, csvOf(rows)).then((res) => res);
    const deadline = Date.now() + 20_000;
    while (!(await importLookingUp()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(Date.now()).toBeLessThan(deadline);
    await as(w.engineer)
      .patch(`/v1/parts/${part.id}`)
      .send({ workspace: w.workspace, name: 'Named by hand' })
      .expect(200);
    const second = await importing;
    expect(second.body).toMatchObject({ updated: 1 });
    const detail = (await as(w.viewer).get(`/v1/parts/${part.id}`).query({ workspace: w.workspace }))
      .body as PartDetail;
    expect(detail.name).toBe('Named by the second import');
    expect(detail.history.map((h) => [h.action, h.changes.name])).toEqual([
      ['import.created', 'Imported part 20000'],
      ['updated', { from: 'Imported part 20000', to: 'Named by hand' }],
      ['import.updated', { from: 'Named by hand', to: 'Named by the second import' }],
    ]);
  });
});
