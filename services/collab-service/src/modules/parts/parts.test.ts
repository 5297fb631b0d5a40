import type { Part } from '@hwp/contracts';
import { type Stack, startStack, type Team } from '#test/collab-test-kit';
import { numbers, partsKit } from '#test/parts-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

const { as, team, createPart, list } = partsKit(() => stack);

describe('parts: create and search', () => {
  let t: Team;
  beforeAll(async () => {
    t = await team();
    await createPart(t, {
      partNumber: 'BRK-100',
      name: 'Steel bracket',
      domain: 'mechanical',
      tags: ['frame', 'steel'],
      attributes: { material: 'steel', finish: 'zinc', tolerance: '0.1' },
      manufacturer_part_number: 'ACME-55',
      manufacturer_name: 'Acme',
      unit_cost: 1.25,
      currency: 'EUR',
      rohs_compliant: true,
      reach_compliant: false,
      conflict_minerals: 'conflict-free',
    });
    await createPart(t, { partNumber: 'RES-200', name: 'Resistor 10k', domain: 'electronic', tags: ['smd'] });
    await createPart(t, { partNumber: 'CAP-300', name: 'Bracket cap', manufacturerPartNumber: 'ACME-77' });
    await createPart(t, { partNumber: 'GLU-400', name: 'Glue', domain: 'chemical', tags: ['steel'] });
  });

  test('accepts snake_case fields and answers camelCase', async () => {
    const page = await list(t, { q: 'brk' });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({
      partNumber: 'BRK-100',
      manufacturerPartNumber: 'ACME-55',
      manufacturerName: 'Acme',
      unitCost: 1.25,
      currency: 'EUR',
      rohsCompliant: true,
      reachCompliant: false,
      conflictMinerals: 'conflict-free',
      lifecycle: 'prototype',
      uom: 'each',
    });
  });

  test('q matches part number by prefix, name by containment, MPN by prefix', async () => {
    expect(numbers(await list(t, { q: 'res' }))).toEqual(['RES-200']);
    expect(numbers(await list(t, { q: '200' }))).toEqual([]); // not a prefix
    expect(numbers(await list(t, { q: 'racket' }))).toEqual(['BRK-100', 'CAP-300']);
    expect(numbers(await list(t, { q: 'acme-7' }))).toEqual(['CAP-300']);
    expect(numbers(await list(t, { q: '100%' }))).toEqual([]);
  });

  test('filters by tag, domain and lifecycle', async () => {
    expect(numbers(await list(t, { tag: 'steel' }))).toEqual(['BRK-100', 'GLU-400']);
    expect(numbers(await list(t, { domain: 'electronic' }))).toEqual(['RES-200']);
    expect((await list(t, { lifecycle: 'released' })).total).toBe(0);
  });

  test('sorts by every key in both directions', async () => {
    const all = (await list(t, {})).items;
    const keys = {
      part_number: (p: Part) => p.partNumber,
      name: (p: Part) => p.name,
      domain: (p: Part) => p.domain,
      lifecycle: (p: Part) => p.lifecycle,
      manufacturer_part_number: (p: Part) => p.manufacturerPartNumber ?? '\uffff',
      updated_at: (p: Part) => p.updatedAt,
    };
    for (const [sort, key] of Object.entries(keys)) {
      const asc = (await list(t, { sort, dir: 'asc' })).items;
      const values = asc.map(key);
      expect(values).toEqual([...values].sort());
      const desc = (await list(t, { sort, dir: 'desc' })).items.map((p) => p.id);
      if (sort !== 'manufacturer_part_number') expect(desc).toEqual(asc.map((p) => p.id).reverse());
      expect(asc).toHaveLength(all.length);
    }
  });

  test('pages are stable when sort values tie', async () => {
    const u = await team();
    for (let i = 0; i < 7; i++) await createPart(u, { partNumber: `T-${i}`, name: 'Same name' });
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await list(u, { sort: 'name', page, pageSize: 2 });
      expect(res).toMatchObject({ total: 7, page, pageSize: 2 });
      seen.push(...res.items.map((p) => p.id));
    }
    expect(new Set(seen).size).toBe(7);
    expect(seen).toEqual([...seen].sort());
  });

  test('a page number past any list is 400, not a failed statement', async () => {
    for (const page of ['1000000000000000000', '10000001']) {
      const res = await as(t.viewer).get('/v1/parts').query({ workspace: t.workspace, q: 'brk', page });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'page', message: expect.any(String) }]);
    }
    expect((await list(t, { page: 10_000_000 })).items).toEqual([]);
  });

  test('a duplicate part number, in any case, is 409', async () => {
    const res = await as(t.engineer)
      .post('/v1/parts')
      .send({ workspace: t.workspace, partNumber: 'brk-100', name: 'x' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
  });

  test('mechanical parts without material, finish or tolerance are 400 naming them', async () => {
    const res = await as(t.engineer)
      .post('/v1/parts')
      .send({
        workspace: t.workspace,
        partNumber: 'M-1',
        name: 'x',
        domain: 'mechanical',
        attributes: { finish: 'raw' },
      });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('material');
    expect(res.body.detail).toContain('tolerance');
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'attributes.material',
      'attributes.tolerance',
    ]);
    const part = await createPart(t, {
      partNumber: 'M-2',
      domain: 'mechanical',
      attributes: { material: 'al', finish: 'anodised', tolerance: '0.05' },
    });
    const patch = await as(t.engineer)
      .patch(`/v1/parts/${part.id}`)
      .query({ workspace: t.workspace })
      .send({ attributes: { material: 'al' } });
    expect(patch.status).toBe(400);
    expect(patch.body.detail).toContain('finish');
  });

  test('electrical attributes are checked by the JSON Schema of the template', async () => {
    const res = await as(t.engineer)
      .post('/v1/parts')
      .send({
        workspace: t.workspace,
        partNumber: 'E-1',
        name: 'x',
        domain: 'electrical',
        attributes: { voltage: 12 },
      });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'attributes.connector_type',
      'attributes.wire_gauge',
    ]);
    await createPart(t, {
      partNumber: 'E-2',
      domain: 'electrical',
      attributes: { voltage: 12, wire_gauge: 'AWG18', connector_type: 'JST' },
    });
  });

  test('CAS numbers must pass the check digit', async () => {
    const bad = await as(t.engineer)
      .post('/v1/parts')
      .send({
        workspace: t.workspace,
        partNumber: 'C-1',
        name: 'x',
        domain: 'chemical',
        attributes: { cas_number: '7732-18-4' },
      });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      { field: 'attributes.cas_number', message: expect.stringContaining('CAS') },
    ]);
    await createPart(t, { partNumber: 'C-2', domain: 'chemical', attributes: { cas_number: '7732-18-5' } });
  });

  test('currency must be an ISO 4217 code and cost not negative', async () => {
    const bad = await as(t.engineer)
      .post('/v1/parts')
      .send({ workspace: t.workspace, partNumber: 'X-1', name: 'x', currency: 'ABC' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('currency');
    const negative = await as(t.engineer)
      .post('/v1/parts')
      .send({ workspace: t.workspace, partNumber: 'X-2', name: 'x', unit_cost: -1 });
    expect(negative.status).toBe(400);
  });

  test('a viewer cannot create parts', async () => {
    const res = await as(t.viewer)
      .post('/v1/parts')
      .send({ workspace: t.workspace, partNumber: 'V-1', name: 'x' });
    expect(res.status).toBe(403);
  });
});
