import type { PartDetail, PartList } from '@hwp/contracts';
import { type Stack, startStack, teamWorkspace } from '#test/collab-test-kit';
import { numbers, partsKit } from '#test/parts-kit';

// Lists of large workspaces (totals, estimates, late pages) and the list's presentation of a part;
// creating, searching and checking parts on a small workspace is in parts.test.ts.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

const { as, team, createPart, list } = partsKit(() => stack);

/**
 * A workspace of `count` parts written by SQL (part number and name as SQL expressions of `i`, from 1),
 * analysed, and a reader of its list pages as its viewer.
 */
async function bulkWorkspace(label: string, count: number, columns: { number: string; name: string }) {
  const w = await teamWorkspace(stack, label);
  await stack.collab.deps.dataSource.query(
    `INSERT INTO parts (id, workspace_id, part_number, name, domain, uom, lifecycle, tags, attributes, created_by)
     SELECT gen_random_uuid(), w.id, ${columns.number}, ${columns.name}, 'mechanical', 'each', 'prototype',
            ARRAY['bulk'], '{}'::jsonb, $2
       FROM workspaces w, generate_series(1, $3::int) i WHERE w.name = $1`,
    [w.workspace, w.owner.user.id, count],
  );
  await stack.collab.deps.dataSource.query('ANALYZE parts');
  const list = (query: Record<string, unknown>) =>
    as(w.viewer)
      .get('/v1/parts')
      .query({ workspace: w.workspace, ...query })
      .expect(200)
      .then((r) => r.body as PartList);
  return { w, list };
}

describe('parts: create and search', () => {
  test('totals are exact up to 1,000 matches, then an estimate flagged as such; count=exact counts all', async () => {
    const { w, list: listed } = await bulkWorkspace('parts-count', 1200, {
      number: `'W-' || lpad(i::text, 5, '0')`,
      name: `'Flat washer ' || i`,
    });
    const page = (query: Record<string, unknown>) => listed({ pageSize: 10, ...query });
    const common = await page({ q: 'washer' });
    expect(common.totalExact).toBe(false);
    expect(common.total).toBeGreaterThan(1000);
    expect(common.items.map((p) => p.partNumber)).toEqual(
      Array.from({ length: 10 }, (_, i) => `W-${String(i + 1).padStart(5, '0')}`),
    );
    expect(await page({ q: 'washer', count: 'exact' })).toMatchObject({ total: 1200, totalExact: true });
    // The last page, cut short, knows the total; past it the estimate stays below the offset.
    const last = await page({ q: 'washer', pageSize: 70, page: 18 });
    expect(last).toMatchObject({ total: 1200, totalExact: true });
    expect(last.items).toHaveLength(10);
    const beyond = await page({ q: 'washer', pageSize: 50, page: 100 });
    expect(beyond.items).toEqual([]);
    expect(beyond.total).toBeGreaterThan(1000);
    expect(beyond.total).toBeLessThan(4950);
    // Without a filter: the first rows in sort order, the same total.
    const all = await page({ dir: 'desc', pageSize: 3 });
    expect(all).toMatchObject({ totalExact: false });
    expect(all.total).toBeGreaterThan(1000);
    expect(all.items.map((p) => p.partNumber)).toEqual(['W-01200', 'W-01199', 'W-01198']);
    expect(await page({ count: 'exact' })).toMatchObject({ total: 1200, totalExact: true });
    expect(await page({ q: 'washer 11' })).toMatchObject({ total: 111, totalExact: true });
    expect(await page({ q: 'w-0000' })).toMatchObject({ total: 9, totalExact: true });
    // Pages of a search with up to 1,000 matches (sorted from the search indexes) in both directions.
    const ones = await page({ q: 'washer 1', dir: 'desc', pageSize: 5, page: 3 });
    expect(ones).toMatchObject({ total: 312, totalExact: true });
    expect(numbers(ones)).toEqual(['W-01190', 'W-01189', 'W-01188', 'W-01187', 'W-01186']);
    expect(numbers(await page({ q: 'w-011', pageSize: 5 }))).toEqual([
      'W-01100',
      'W-01101',
      'W-01102',
      'W-01103',
      'W-01104',
    ]);
    expect(numbers(await page({ q: 'w-011', pageSize: 5, page: 21 }))).toEqual([]);
    await as(w.viewer).get('/v1/parts').query({ workspace: w.workspace, count: 'approximate' }).expect(400);
  });

  test('a word in thousands of names is past the bound from a sample of them; other filters still apply', async () => {
    // Past 1,000 matches among the eighth of the parts in the sample index (~1,500 of 12,000).
    const { list: listed } = await bulkWorkspace('parts-sampled', 12_000, {
      number: `'S-' || lpad(i::text, 5, '0')`,
      name: `'Spring washer ' || i`,
    });
    const common = await listed({ q: 'washer', pageSize: 5 });
    expect(common).toMatchObject({ totalExact: false, page: 1 });
    expect(common.total).toBeGreaterThan(1000);
    expect(numbers(common)).toEqual(['S-00001', 'S-00002', 'S-00003', 'S-00004', 'S-00005']);
    expect(await listed({ q: 'washer', count: 'exact', pageSize: 1 })).toMatchObject({
      total: 12_000,
      totalExact: true,
    });
    // The sample's matches must pass the other filters too: none of these parts is electronic.
    expect(await listed({ q: 'washer', domain: 'electronic' })).toMatchObject({
      items: [],
      total: 0,
      totalExact: true,
    });
    expect(await listed({ q: 'washer', tag: 'bulk', lifecycle: 'released' })).toMatchObject({
      total: 0,
      totalExact: true,
    });
    expect(await listed({ q: 'washer 111', pageSize: 1 })).toMatchObject({ total: 111, totalExact: true });
  }, 60_000);

  test('common matches that sort after 20,000 other parts: the pages are still right', async () => {
    const { list: listed } = await bulkWorkspace('parts-late', 21_700, {
      number: `CASE WHEN i <= 20500 THEN 'A-' ELSE 'Z-' END || lpad(i::text, 5, '0')`,
      name: `CASE WHEN i <= 20500 THEN 'Filler ' ELSE 'Late gasket ' END || i`,
    });
    const page = (query: Record<string, unknown>) => listed({ q: 'gasket', ...query });
    const first = await page({ pageSize: 5 });
    expect(first).toMatchObject({ totalExact: false, page: 1 });
    expect(numbers(first)).toEqual(['Z-20501', 'Z-20502', 'Z-20503', 'Z-20504', 'Z-20505']);
    expect(numbers(await page({ pageSize: 50, page: 3 }))).toEqual(
      Array.from({ length: 50 }, (_, i) => `Z-${20601 + i}`),
    );
    expect(numbers(await page({ pageSize: 3, dir: 'desc' }))).toEqual(['Z-21700', 'Z-21699', 'Z-21698']);
    expect(numbers(await page({ pageSize: 50, page: 24 }))).toEqual(
      Array.from({ length: 50 }, (_, i) => `Z-${21651 + i}`),
    );
    expect(await page({ pageSize: 50, page: 25 })).toMatchObject({ items: [] });
    expect(await page({ count: 'exact', pageSize: 1 })).toMatchObject({ total: 1200, totalExact: true });
  }, 60_000);
});

describe('parts: the list presents each part as its detail does', () => {
  test('every field, with escapes, unicode, decimals, nulls and sub-millisecond timestamps', async () => {
    const t = await team();
    const tricky = 'Quote " backslash \\ tab \t newline \n bell \u0007 del \u007f ü 漢字 😀 \u2028';
    const created = [
      await createPart(t, {
        partNumber: 'EQ-1',
        name: tricky,
        description: `${tricky} </script>`,
        domain: 'electronic',
        tags: ['a"b', 'c\\d', 'ü', 'x,y', '{z}'],
        attributes: {
          nested: { list: [1, 2.5, -0.001, null, true], s: tricky },
          big: 12345678.9,
          emptyKey: { '': 0 },
        },
        manufacturer_name: 'Acme "AG"',
        manufacturer_part_number: 'MPN-ü',
        unit_cost: 0.000001,
        currency: 'EUR',
        rohs_compliant: false,
        reach_compliant: true,
        conflict_minerals: 'unknown',
      }),
      await createPart(t, { partNumber: 'EQ-2', name: 'Plain', unit_cost: 1234567.123456 }),
      await createPart(t, { partNumber: 'EQ-3', name: 'Round', unit_cost: 100, currency: 'USD' }),
      await createPart(t, { partNumber: 'EQ-4', name: 'Empty', tags: [], attributes: {} }),
    ];
    // Timestamps written by SQL carry microseconds (JSON has milliseconds, truncated as pg's Date is).
    await stack.collab.deps.dataSource.query(
      `UPDATE parts SET updated_at = '2026-01-02T03:04:05.678999Z', created_at = '1999-12-31T23:59:59.000001Z' WHERE id = $1`,
      [created[3].id],
    );
    const page = await list(t, { q: 'eq-', pageSize: 10 });
    expect(page.items.map((p) => p.partNumber)).toEqual(['EQ-1', 'EQ-2', 'EQ-3', 'EQ-4']);
    for (const item of page.items) {
      const detail = await as(t.viewer).get(`/v1/parts/${item.id}`).query({ workspace: t.workspace });
      expect(detail.status).toBe(200);
      const { versions: _versions, history: _history, ...part } = detail.body as PartDetail;
      expect(item).toStrictEqual(part);
      // The same keys in the same order as the detail's.
      expect(Object.keys(item)).toEqual(Object.keys(part));
    }
    // As created (the name trimmed of its trailing line separator, as every name is).
    expect(page.items.slice(0, 3)).toStrictEqual(created.slice(0, 3));
    expect(page.items[0]).toMatchObject({ name: tricky.trimEnd(), unitCost: 0.000001, rohsCompliant: false });
    expect(page.items[1].unitCost).toBe(1234567.123456);
    expect(page.items[2].unitCost).toBe(100);
    expect(page.items[3]).toMatchObject({
      unitCost: null,
      manufacturerName: null,
      rohsCompliant: null,
      createdAt: '1999-12-31T23:59:59.000Z',
      updatedAt: '2026-01-02T03:04:05.678Z',
    });
    // Written compactly, as JSON.stringify writes it (outside jsonb attributes).
    const raw = await as(t.viewer).get('/v1/parts').query({ workspace: t.workspace, q: 'plain' });
    expect(raw.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(raw.text).toBe(JSON.stringify(JSON.parse(raw.text)));
    // Past the last page: no items, the count kept.
    const beyond = await list(t, { q: 'eq-', pageSize: 10, page: 3 });
    expect(beyond).toEqual({ items: [], total: 4, totalExact: true, page: 3, pageSize: 10 });
  });
});
