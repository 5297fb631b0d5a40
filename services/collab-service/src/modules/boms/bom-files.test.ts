import { Readable } from 'node:stream';
import type { Bom, BomNode, Part } from '@hwp/contracts';
import { binary } from '@hwp/platform/test-kit';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { bomKit } from '#test/boms-kit';
import { type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

/** What a line is, without ids: compared between a BOM and its re-import. */
const line = (n: BomNode) => ({
  level: n.level,
  partNumber: n.partNumber,
  qty: n.qty,
  uom: n.uom,
  refdes: n.refdes,
  notes: n.notes,
  attributes: n.attributes,
  effectivity: [n.dateFrom, n.dateTo, n.serialFrom, n.serialTo, n.lotFrom, n.lotTo],
  alternates: n.alternates.map((a) => `${a.partNumber}:${a.approval}`),
});

describe('BOM exports', () => {
  let t: Team;
  let kit: ReturnType<typeof bomKit>;
  let top: Bom;
  let sub: Bom;
  let p: Record<string, Part>;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'bomexp');
    kit = bomKit(stack, t);
    p = {};
    for (const [pn, fields] of [
      ['EXP-TOP', {}],
      ['EXP-SUB', {}],
      ['EXP-GRP', {}],
      ['EXP-SCREW', { unit_cost: 0.05, currency: 'USD' }],
      ['EXP-CABLE', { unit_cost: 1.2, currency: 'USD' }],
      ['EXP-ALT', {}],
      ['EXP-EVIL', { name: '=HYPERLINK("http://evil.example","x")' }],
    ] as const) {
      p[pn] = await kit.part(pn, fields);
    }
    sub = await kit.bom(p['EXP-SUB'], 'A');
    await kit.lines(sub, [{ childPartId: p['EXP-SCREW'].id, qty: 2 }]);
    top = await kit.bom(p['EXP-TOP'], 'A');
    const first = await kit.lines(top, [
      { childPartId: p['EXP-SUB'].id, qty: 2, sortIndex: 0 },
      { childPartId: p['EXP-GRP'].id, qty: 1, sortIndex: 1, attributes: { station: 'S1' } },
      {
        childPartId: p['EXP-CABLE'].id,
        qty: 1.5,
        uom: 'mm',
        sortIndex: 2,
        notes: '+cut to length',
        dateFrom: '2026-01-01',
        dateTo: '2026-12-31',
        serialFrom: 100,
        lotFrom: 'L-7',
      },
      { childPartId: p['EXP-EVIL'].id, qty: 4, refdes: 'R1-R4', sortIndex: 3 },
    ]);
    const group = first.tree.find((n) => n.partNumber === 'EXP-GRP') as BomNode;
    await kit.lines(top, [{ childPartId: p['EXP-SCREW'].id, qty: 3, parentItemId: group.itemId }]);
    const cable = first.tree.find((n) => n.partNumber === 'EXP-CABLE') as BomNode;
    await kit
      .as(t.manager)
      .post(`/v1/boms/${top.id}/items/${cable.itemId}/alternates`)
      .query(kit.q)
      .send({ alternates: [{ partId: p['EXP-ALT'].id, approval: 'approved', rationale: 'same gauge' }] })
      .expect(200);
  });

  const get = (format: string, headers: Record<string, string> = {}) =>
    kit
      .as(t.viewer)
      .get(`/v1/boms/${top.id}/export.${format}`)
      .query(kit.q)
      .set(headers)
      .buffer(true)
      .parse(binary);

  test('export.csv is hierarchical, neutralises formulas, and imports back as the same BOM', async () => {
    const res = await get('csv').expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="EXP-TOP_engineering_rev-A.csv"');
    const text = (res.body as Buffer).toString('utf8').replace(/^\uFEFF/, '');
    const rows = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data;
    expect(
      rows.map((r) => [r.level, r.item_number, r.part_number, r.qty, r.extended_qty, r.assembly]),
    ).toEqual([
      ['1', '1', 'EXP-SUB', '2', '2', 'EXP-TOP'],
      ['2', '1.1', 'EXP-SCREW', '2', '4', 'EXP-SUB'],
      ['1', '2', 'EXP-GRP', '1', '1', 'EXP-TOP'],
      ['2', '2.1', 'EXP-SCREW', '3', '3', 'EXP-TOP'],
      ['1', '3', 'EXP-CABLE', '1.5', '1.5', 'EXP-TOP'],
      ['1', '4', 'EXP-EVIL', '4', '4', 'EXP-TOP'],
    ]);
    const cable = rows[4];
    expect(cable).toMatchObject({
      uom: 'mm',
      notes: "'+cut to length",
      alternates: 'EXP-ALT (approved)',
      date_from: '2026-01-01',
      date_to: '2026-12-31',
      serial_from: '100',
      lot_from: 'L-7',
    });
    expect(rows[5]).toMatchObject({ name: `'=HYPERLINK("http://evil.example","x")`, refdes: 'R1-R4' });

    const copy = await kit.bom(p['EXP-TOP'], 'B');
    const imported = await kit
      .as(t.manager)
      .post('/v1/boms/import')
      .query(kit.q)
      .field({ bomId: copy.id })
      .attach('file', res.body as Buffer, { filename: 'export.csv', contentType: 'text/csv' })
      .expect(200);
    expect(imported.body).toMatchObject({ lines: 5, skippedRows: 1, createdParts: [], errorCount: 0 });
    const own = (nodes: BomNode[], bomId: string) => nodes.filter((n) => n.bomId === bomId).map(line);
    expect(own((await kit.detail(copy)).tree, copy.id)).toEqual(own((await kit.detail(top)).tree, top.id));
  });

  test('export.xlsx holds the same cells for a second reader (exceljs), outlined by level', async () => {
    const csv = (await get('csv').expect(200)).body.toString('utf8').replace(/^\uFEFF/, '');
    const expected = Papa.parse<string[]>(csv, { skipEmptyLines: true }).data;
    const res = await get('xlsx').expect(200);
    expect(res.headers['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(res.body as unknown as ArrayBuffer);
    const sheet = book.worksheets[0];
    const cells: string[][] = [];
    const levels: number[] = [];
    sheet.eachRow({ includeEmpty: false }, (row, index) => {
      const values: string[] = [];
      for (let c = 1; c <= expected[0].length; c++) {
        const value = row.getCell(c).value;
        values.push(value === null || value === undefined ? '' : String(value));
      }
      cells.push(values);
      if (index > 1) levels.push(row.outlineLevel ?? 0);
    });
    expect(cells).toEqual(expected);
    expect(levels).toEqual([0, 1, 0, 1, 0, 0]);
    // Quantities and costs are numeric cells, so a SUM over the column adds them up.
    for (const name of ['qty', 'extended_qty', 'unit_cost', 'extended_cost']) {
      const column = expected[0].indexOf(name) + 1;
      const values: unknown[] = [];
      sheet.eachRow((row, index) => {
        const value = row.getCell(column).value;
        if (index > 1 && value !== null && value !== undefined) values.push(value);
      });
      expect(values.length).toBeGreaterThan(0);
      expect(values.every((v) => typeof v === 'number')).toBe(true);
    }
  });

  test('export.erp.csv: parent/child pairs, unit codes, cost columns, and 304 for an unchanged ETag', async () => {
    const res = await get('erp.csv').expect(200);
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const rows = Papa.parse<Record<string, string>>(
      (res.body as Buffer).toString('utf8').replace(/^\uFEFF/, ''),
      { header: true, skipEmptyLines: true },
    ).data;
    expect(
      rows.map((r) => [
        r.parent_part_number,
        r.child_part_number,
        r.qty_per_parent,
        r.uom_code,
        r.qty_per_top,
      ]),
    ).toEqual([
      ['EXP-TOP', 'EXP-SUB', '2', 'EA', '2'],
      ['EXP-SUB', 'EXP-SCREW', '2', 'EA', '4'],
      ['EXP-TOP', 'EXP-GRP', '1', 'EA', '1'],
      ['EXP-GRP', 'EXP-SCREW', '3', 'EA', '3'],
      ['EXP-TOP', 'EXP-CABLE', '1.5', 'MMT', '1.5'],
      ['EXP-TOP', 'EXP-EVIL', '4', 'EA', '4'],
    ]);
    expect(rows[4]).toMatchObject({
      unit_cost: '1.2',
      currency: 'USD',
      extended_cost: '1.8',
      extended_cost_currency: 'USD',
    });
    // A spreadsheet reads the cost columns as numbers and sums them (qty per parent x unit cost:
    // 0.05 x 2 + 0.05 x 3 + 1.2 x 1.5).
    const book = new ExcelJS.Workbook();
    const sheet = await book.csv.read(
      Readable.from([(res.body as Buffer).toString('utf8').replace(/^\uFEFF/, '')]),
    );
    const headers = (sheet.getRow(1).values as string[]).slice(1);
    const column = (name: string) => sheet.getColumn(headers.indexOf(name) + 1);
    const leaves: number[] = [];
    column('extended_cost').eachCell((cell, row) => {
      if (row > 1 && ['EXP-SCREW', 'EXP-CABLE'].includes(String(sheet.getRow(row).getCell(2).value))) {
        expect(typeof cell.value).toBe('number');
        leaves.push(cell.value as number);
      }
    });
    expect(leaves.reduce((a, b) => a + b, 0)).toBeCloseTo(0.1 + 0.15 + 1.8, 6);
    await get('erp.csv', { 'If-None-Match': etag }).expect(304);
    await get('erp.csv', { 'If-None-Match': `W/${etag}` }).expect(304);
  });

  test('exports answer If-Modified-Since: 304 unchanged, 200 after a line, a part cost or a child BOM changes', async () => {
    // Each change must be seen by a poll that holds the validators of the answer before it.
    const poll = async (validators: Record<string, string>) => get('erp.csv', validators);
    let last = await get('erp.csv').expect(200);
    const expectUnchanged = async () => {
      expect((await poll({ 'If-None-Match': last.headers.etag as string })).status).toBe(304);
      // Last-Modified is never later than the answer's Date: a poll in the second of a change gets
      // the export again (never a stale 304), the next one 304.
      for (let tries = 0; ; tries++) {
        const since = last.headers['last-modified'] as string;
        expect(new Date(since).toUTCString()).toBe(since);
        const again = await poll({ 'If-Modified-Since': since });
        if (again.status === 304) break;
        expect(again.status).toBe(200);
        expect(again.headers.etag).toBe(last.headers.etag);
        expect(tries).toBeLessThan(4);
        await new Promise((resolve) => setTimeout(resolve, 600));
        last = again;
      }
    };
    const expectChanged = async () => {
      const seen = last;
      last = await poll({ 'If-Modified-Since': seen.headers['last-modified'] as string });
      expect(last.status).toBe(200);
      expect(last.headers.etag).not.toBe(seen.headers.etag);
      expect((await poll({ 'If-None-Match': seen.headers.etag as string })).status).toBe(200);
    };
    await expectUnchanged();
    // Within the same second as the answer above: the change clock still moves past it.
    await kit.lines(top, [{ childPartId: p['EXP-ALT'].id, qty: 1 }]);
    await expectChanged();
    await expectUnchanged();
    await kit
      .as(t.engineer)
      .patch(`/v1/parts/${p['EXP-SCREW'].id}`)
      .query(kit.q)
      .send({ unitCost: 0.06 })
      .expect(200);
    await expectChanged();
    await expectUnchanged();
    await kit.as(t.engineer).post(`/v1/boms/${sub.id}/submit`).query(kit.q).send({}).expect(200);
    await kit.as(t.manager).post(`/v1/boms/${sub.id}/approve`).query(kit.q).send({}).expect(200);
    await expectChanged();
    await expectUnchanged();
    // A date that is not one is ignored: the export is sent.
    expect((await poll({ 'If-Modified-Since': 'yesterday' })).status).toBe(200);
  });
});

describe('BOM_MAX_REFDES', () => {
  let small: Stack;
  beforeAll(async () => {
    small = await startStack({ collab: { BOM_MAX_REFDES: '5' } });
  }, 60_000);
  afterAll(() => small?.stop());

  test('bounds the designators of an import file and of a change of lines', async () => {
    const t = await teamWorkspace(small, 'bomcap');
    const kit = bomKit(small, t);
    const bom = await kit.bom(await kit.part('CAP-ASM'), 'A');
    await kit.part('CAP-R');
    const file = 'part_number,qty,refdes\nCAP-R,4,R1-R4\nCAP-R,2,R5-R6\n';
    const res = await kit
      .as(t.engineer)
      .post('/v1/boms/import')
      .query(kit.q)
      .field({ bomId: bom.id, dryRun: 'true' })
      .attach('file', Buffer.from(file), { filename: 'bom.csv', contentType: 'text/csv' });
    expect([res.status, res.body.errors]).toEqual([
      400,
      [{ field: 'file', message: 'row 3 (refdes): the file holds more than 5 reference designators' }],
    ]);
    const change = await kit
      .as(t.engineer)
      .post(`/v1/boms/${bom.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartNumber: 'CAP-R', qty: 6, refdes: 'R1-R6' }] });
    expect([change.status, change.body.errors]).toEqual([
      400,
      [{ field: 'items[0].refdes', message: 'the change holds more than 5 reference designators' }],
    ]);
    // Within it, both are taken.
    await kit.lines(bom, [{ childPartNumber: 'CAP-R', qty: 5, refdes: 'R1-R5' }]);
  });
});
