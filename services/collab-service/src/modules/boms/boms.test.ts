import type { Bom, BomDetail, CostRollup, Part } from '@hwp/contracts';
import { bomKit, outline } from '#test/boms-kit';
import { type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

describe('a three-level BOM', () => {
  let t: Team;
  let kit: ReturnType<typeof bomKit>;
  let top: Bom;
  let parts: Record<string, Part>;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'bom');
    kit = bomKit(stack, t);
    parts = {};
    for (const [pn, fields] of [
      ['TOP', {}],
      ['SUB-1', { unit_cost: 99 }], // has its own BOM: its rollup counts, not this cost
      ['SUB-2', {}],
      ['BOLT', { unit_cost: 0.1, currency: 'USD' }],
      ['PLATE', { unit_cost: 2.5, currency: 'USD' }],
      ['PIN', { unit_cost: 0.05, currency: 'USD' }],
      ['RES', { conflict_minerals: 'unknown' }],
      ['LABEL', { unit_cost: 0.02, currency: 'EUR', rohs_compliant: false }],
    ] as const) {
      parts[pn] = await kit.part(pn, fields);
    }
    const sub2 = await kit.bom(parts['SUB-2'], 'A');
    await kit.lines(sub2, [
      { childPartId: parts.PIN.id, qty: 2 },
      { childPartNumber: 'res', qty: 5, refdes: 'R1-R4' },
    ]);
    const sub1 = await kit.bom(parts['SUB-1'], 'A');
    await kit.lines(sub1, [
      { childPartId: parts.BOLT.id, qty: 4, sortIndex: 0 },
      { childPartId: parts.PLATE.id, qty: 1, sortIndex: 1 },
      { childPartId: parts['SUB-2'].id, qty: 3, sortIndex: 2 },
    ]);
    await kit.approve(sub1);
    top = await kit.bom(parts.TOP, 'A');
    await kit.lines(top, [
      { childPartId: parts['SUB-1'].id, qty: 2, sortIndex: 0 },
      { child_part_id: parts.BOLT.id, qty: 6, sort_index: 1 },
      { childPartId: parts.LABEL.id, qty: 1, sortIndex: 2 },
    ]);
  });

  test('the tree expands sub-assemblies with extended quantities', async () => {
    const detail = await kit.detail(top);
    expect(detail).toMatchObject({ assemblyPartNumber: 'TOP', revision: 'A', status: 'draft', itemCount: 3 });
    expect(outline(detail.tree)).toEqual([
      'SUB-1 x2 (2)',
      '  BOLT x4 (8)',
      '  PLATE x1 (2)',
      '  SUB-2 x3 (6)',
      '    PIN x2 (12)',
      '    RES x5 (30)',
      'BOLT x6 (6)',
      'LABEL x1 (1)',
    ]);
    const node = (pn: string, level: number) =>
      detail.tree.find((n) => n.partNumber === pn && n.level === level) as BomDetail['tree'][number];
    expect(node('RES', 3).designators).toEqual(['R1', 'R2', 'R3', 'R4']);
    // Section 2.9's shapes: refdes a string, the line's id as the upsert's items[].id takes it.
    expect(node('RES', 3).refdes).toBe('R1-R4');
    expect(node('RES', 3).id).toBe(node('RES', 3).itemId);
    expect(
      node('RES', 3)
        .warnings.map((w) => w.code)
        .sort(),
    ).toEqual(['missing_cost', 'non_compliant', 'refdes_mismatch']);
    expect(node('LABEL', 1).warnings).toEqual([
      { code: 'non_compliant', message: 'LABEL is not RoHS compliant' },
    ]);
    expect(node('PIN', 3).warnings).toEqual([]);
    expect(node('SUB-1', 1).subBomId).not.toBeNull();
    // SUB-1: BOLT 4 x 0.10 + PLATE 2.50 + SUB-2 3 x (PIN 2 x 0.05) = 3.20 per SUB-1; x2.
    expect(node('SUB-1', 1).extendedCost).toEqual([{ currency: 'USD', amount: 6.4 }]);
    expect(node('SUB-2', 2).extendedCost).toEqual([{ currency: 'USD', amount: 0.3 }]);
  });

  test('the cost rollup equals the hand-computed totals and lists the missing cost', async () => {
    const res = await kit.as(t.viewer).get(`/v1/boms/${top.id}/cost-rollup`).query(kit.q).expect(200);
    const rollup = res.body as CostRollup;
    // USD: 2 x 3.20 + 6 x 0.10 = 7.00; EUR: 1 x 0.02, kept apart.
    expect(rollup.totals).toEqual([
      { currency: 'EUR', amount: 0.02 },
      { currency: 'USD', amount: 7 },
    ]);
    expect(rollup.complete).toBe(false);
    expect(rollup.missingCosts).toEqual([
      expect.objectContaining({ partNumber: 'RES', path: ['TOP', 'SUB-1', 'SUB-2', 'RES'] }),
    ]);
    expect(rollup.lines.map((l) => l.partNumber)).toEqual(['SUB-1', 'BOLT', 'LABEL']);
    expect(rollup).toMatchObject({ converted: null, unconverted: [] });

    // With the workspace's rates, one total in its base currency: 7.00 + 0.02 x 1.10.
    await kit
      .as(t.manager)
      .post(`/v1/workspaces/${t.workspace}/bom-settings`)
      .send({ currency_rates: { base: 'USD', rates: { EUR: 1.1 } } })
      .expect(200);
    const converted = await kit.as(t.viewer).get(`/v1/boms/${top.id}/cost-rollup`).query(kit.q).expect(200);
    expect(converted.body).toMatchObject({ converted: { currency: 'USD', amount: 7.022 }, unconverted: [] });
    await kit
      .as(t.manager)
      .post(`/v1/workspaces/${t.workspace}/bom-settings`)
      .send({ currencyRates: { base: 'CHF', rates: { EUR: 0.95 } } })
      .expect(200);
    const partial = await kit.as(t.viewer).get(`/v1/boms/${top.id}/cost-rollup`).query(kit.q).expect(200);
    expect(partial.body).toMatchObject({ converted: null, unconverted: ['USD'] });
    const bad = await kit
      .as(t.manager)
      .post(`/v1/workspaces/${t.workspace}/bom-settings`)
      .send({ currencyRates: { base: 'usd', rates: { EUR: -1 } } })
      .expect(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'currencyRates.base',
      'currencyRates.rates.EUR',
    ]);
  });

  test('where-used on a part at several depths returns each path once', async () => {
    const direct = await kit
      .as(t.viewer)
      .get(`/v1/parts/${parts.BOLT.id}/where-used`)
      .query(kit.q)
      .expect(200);
    expect(direct.body.items.map((e: { path: string[]; qty: number }) => [e.path.join('>'), e.qty])).toEqual([
      ['SUB-1>BOLT', 4],
      ['TOP>BOLT', 6],
    ]);
    const all = await kit
      .as(t.viewer)
      .get(`/v1/parts/${parts.PIN.id}/where-used`)
      .query({ ...kit.q, levels: 'all' })
      .expect(200);
    expect(
      all.body.items.map((e: { path: string[]; qty: number; level: number }) => [
        e.level,
        e.path.join('>'),
        e.qty,
      ]),
    ).toEqual([
      [1, 'SUB-2>PIN', 2],
      [2, 'SUB-1>SUB-2>PIN', 6],
      [3, 'TOP>SUB-1>SUB-2>PIN', 12],
    ]);
  });

  test('one change of lines may hold 100,000 designators in all, counted before expanding', async () => {
    const x = await kit.part('REF-X');
    const bx = await kit.bom(x, 'A');
    // About 220 KB of JSON, 4 x 10^7 designators once expanded.
    const items = Array.from({ length: 4_000 }, () => ({
      childPartNumber: 'PIN',
      qty: 1,
      refdes: 'R1-R10000',
    }));
    const res = await kit.as(t.engineer).post(`/v1/boms/${bx.id}/items`).query(kit.q).send({ items });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'items[10].refdes', message: 'the change holds more than 100000 reference designators' },
    ]);
    expect((await kit.detail(bx)).tree).toEqual([]);
  });

  test('a designator text over 20,000 characters is refused before it is read', async () => {
    const x = await kit.part('REF-LONG');
    const bx = await kit.bom(x, 'A');
    // 150,000 spaces between two designators: the old dash rule retried the run from every space (19 s).
    const refdes = `R1${' '.repeat(150_000)}R2`;
    const res = await kit
      .as(t.engineer)
      .post(`/v1/boms/${bx.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartNumber: 'PIN', qty: 2, refdes }] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'items[0].refdes', message: 'reference designators longer than 20000 characters' },
    ]);
    expect((await kit.detail(bx)).tree).toEqual([]);
  });

  test('a cycle planted in the database does not hang where-used or the tree', async () => {
    const x = await kit.part('CYC-X');
    const y = await kit.part('CYC-Y');
    const bx = await kit.bom(x, 'A');
    const by = await kit.bom(y, 'A');
    await kit.lines(bx, [{ childPartId: y.id, qty: 1 }]);
    await kit.lines(by, [{ childPartId: parts.PIN.id, qty: 1 }]);
    // X contains Y; now Y contains X, written around the service's check.
    await stack.collab.deps.dataSource.query(
      `INSERT INTO bom_items (id, bom_id, child_part_id, qty) VALUES (gen_random_uuid(), $1, $2, 2)`,
      [by.id, x.id],
    );
    const used = await kit
      .as(t.viewer)
      .get(`/v1/parts/${parts.PIN.id}/where-used`)
      .query({ ...kit.q, levels: 'all' })
      .expect(200);
    const paths = used.body.items.map((e: { path: string[] }) => e.path.join('>'));
    expect(paths).toEqual(expect.arrayContaining(['CYC-Y>PIN', 'CYC-X>CYC-Y>PIN']));
    expect(new Set(paths).size).toBe(paths.length);
    const tree = await kit.detail(bx);
    expect(outline(tree.tree)).toEqual(['CYC-Y x1 (1)', '  PIN x1 (1)', '  CYC-X x2 (2)']);
    expect(tree.tree[2].warnings.map((w) => w.code)).toContain('cycle');
  });
});

describe('cycles are refused at write time', () => {
  test('A contains B contains A: 409 naming the cycle, nothing written', async () => {
    const t = await teamWorkspace(stack, 'bomcyc');
    const kit = bomKit(stack, t);
    const a = await kit.part('ASM-A');
    const b = await kit.part('ASM-B');
    const bomA = await kit.bom(a, 'A');
    const bomB = await kit.bom(b, 'A');
    await kit.lines(bomA, [{ childPartId: b.id, qty: 1 }]);
    const res = await kit
      .as(t.engineer)
      .post(`/v1/boms/${bomB.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartId: a.id, qty: 1 }] });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'conflict', cycle: ['ASM-B', 'ASM-A', 'ASM-B'] });
    expect(res.body.detail).toContain('ASM-B -> ASM-A -> ASM-B');
    expect((await kit.detail(bomB)).tree).toEqual([]);
    const self = await kit
      .as(t.engineer)
      .post(`/v1/boms/${bomA.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartId: a.id, qty: 1 }] });
    expect(self.status).toBe(409);
  });
});

describe('a lattice of shared sub-assemblies', () => {
  test('a tree that expands past 100,000 occurrences is refused with 413, not expanded', async () => {
    const t = await teamWorkspace(stack, 'lattice');
    const kit = bomKit(stack, t);
    // A_k and B_k each contain A_k-1 and B_k-1: 2^18 occurrences under TOP from 66 lines.
    const levels = 16;
    const a: Part[] = [];
    const b: Part[] = [];
    for (let k = 0; k <= levels; k++) {
      a.push(await kit.part(`LAT-A${k}`));
      b.push(await kit.part(`LAT-B${k}`));
    }
    const top = await kit.bom(await kit.part('LAT-TOP'), 'A');
    const boms: [Bom, number][] = [];
    for (let k = levels; k >= 1; k--) {
      for (const part of [a[k], b[k]]) boms.push([await kit.bom(part, 'A'), k]);
    }
    // Filled from the top down, each change's own tree is small while it is made.
    await kit.lines(top, [
      { childPartId: a[levels].id, qty: 1 },
      { childPartId: b[levels].id, qty: 1 },
    ]);
    for (const [bom, k] of boms) {
      await kit.lines(bom, [
        { childPartId: a[k - 1].id, qty: 1 },
        { childPartId: b[k - 1].id, qty: 1 },
      ]);
    }
    for (const path of [`/v1/boms/${top.id}`, `/v1/boms/${top.id}/cost-rollup`]) {
      const res = await kit.as(t.viewer).get(path).query(kit.q);
      expect([path, res.status, res.body.code]).toEqual([path, 413, 'payload_too_large']);
    }
    // A change whose answer would be that tree is refused and leaves the lines as they were.
    const more = await kit
      .as(t.engineer)
      .post(`/v1/boms/${top.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartNumber: 'LAT-A0', qty: 1 }] });
    expect(more.status).toBe(413);
    const [{ count }] = await stack.collab.deps.dataSource.query(
      'SELECT count(*)::int AS count FROM bom_items WHERE bom_id = $1',
      [top.id],
    );
    expect(count).toBe(2);
    // The sub-assemblies stay readable.
    expect((await kit.detail(boms[boms.length - 1][0])).tree).toHaveLength(2);
    // Where-used of the bottom part: 2^17 paths up, refused; its direct uses are two.
    const usedIn = (levels: string) =>
      kit
        .as(t.viewer)
        .get(`/v1/parts/${a[0].id}/where-used`)
        .query({ ...kit.q, levels });
    const everywhere = await usedIn('all');
    expect([everywhere.status, everywhere.body.code]).toEqual([413, 'payload_too_large']);
    expect((await usedIn('1').expect(200)).body.items).toHaveLength(2);
  }, 60_000);
});
