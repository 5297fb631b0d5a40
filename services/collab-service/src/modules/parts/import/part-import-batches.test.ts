import type { PartDetail, PartList } from '@hwp/contracts';
import type { Stack } from '#test/collab-test-kit';
import { csvOf, goodRow, type Row, usePartImportStack } from '#test/parts-import-kit';

// Files over many write batches, and changes made by others while an import runs (the first tests of
// this describe, on one workspace, are in part-import-apply.test.ts).

let stack: Stack;
const { as, team, upload, partCount, historyState } = usePartImportStack((running) => {
  stack = running.stack;
});

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

describe('parts import: dry run, atomic apply, idempotent re-import', () => {
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
