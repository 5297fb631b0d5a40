import type { Bom, BomImportReport } from '@hwp/contracts';
import { bomKit } from '#test/boms-kit';
import { type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

describe('BOM import', () => {
  let t: Team;
  let kit: ReturnType<typeof bomKit>;
  let bom: Bom;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'bomimp');
    kit = bomKit(stack, t);
    const asm = await kit.part('IMP-ASM');
    await kit.part('IMP-R', { unit_cost: 0.01 });
    await kit.part('IMP-C');
    bom = await kit.bom(asm, 'A');
  });

  const upload = (file: string, fields: Record<string, string>, user = t.engineer) =>
    kit
      .as(user)
      .post('/v1/boms/import')
      .query(kit.q)
      .field({ bomId: bom.id, ...fields })
      .attach('file', Buffer.from(file), { filename: 'bom.csv', contentType: 'text/csv' });

  const withErrors = [
    'PN,Quantity,Reference,Unit,Comment',
    'IMP-R,4,R1-R4,,pull-ups',
    'imp-new,2,,pcs,',
    'IMP-C,0,,,',
    ',1,,,',
    'IMP-C,2,C1-C3,,',
  ].join('\n');

  test('a dry run reports rows, errors, warnings and the parts it would create; nothing is written', async () => {
    const res = await upload(withErrors, { dryRun: 'true' }).expect(200);
    const report = res.body as BomImportReport;
    expect(report).toMatchObject({ dryRun: true, format: 'csv', rows: 5, valid: 3, errorCount: 2, lines: 3 });
    expect(report.errors).toEqual([
      { row: 4, column: 'Quantity', message: 'must be greater than 0' },
      { row: 5, column: 'PN', message: 'required' },
    ]);
    expect(report.warnings).toEqual([
      { row: 6, column: 'refdes', message: '3 reference designators for a quantity of 2' },
    ]);
    expect(report.createdParts).toEqual(['imp-new']);
    expect((await kit.detail(bom)).tree).toEqual([]);
  });

  test('the 801 KB file of 20,000 x R1-R10000 is a prompt 400 naming the row; a reader keeps its latency', async () => {
    const rows = ['part_number,qty,refdes,notes'];
    for (let i = 0; i < 20_000; i++) rows.push('IMP-R,10000,R1-R10000,ten thousand resistors');
    const file = `${rows.join('\n')}\n`;
    expect(file.length).toBeGreaterThan(800_000);
    // Another member reads the BOM the whole time the import runs.
    const read = async () => {
      const started = performance.now();
      await kit.as(t.viewer).get(`/v1/boms/${bom.id}`).query(kit.q).expect(200);
      return performance.now() - started;
    };
    // Warm: the first parse under ts-jest transpiles the worker's sources (built code does not).
    await upload('part_number,qty\nIMP-R,1\n', { dryRun: 'true' }).expect(200);
    for (let i = 0; i < 5; i++) await read();
    const started = performance.now();
    let done = false;
    const importing = upload(file, { dryRun: 'true' }).then((res) => {
      done = true;
      return { res, ms: performance.now() - started };
    });
    const latencies: number[] = [];
    while (!done) latencies.push(await read());
    const { res: dry, ms } = await importing;
    // Ten rows fit the file's 100,000 designators; the eleventh ends the import, unexpanded.
    expect([dry.status, dry.body.code, dry.body.errors]).toEqual([
      400,
      'validation_failed',
      [{ field: 'file', message: 'row 12 (refdes): the file holds more than 100000 reference designators' }],
    ]);
    expect(dry.body.detail).toMatch(/^Row 12, column refdes: .*split the file into several imports/);
    expect(ms).toBeLessThan(5_000);
    expect(Math.max(...latencies)).toBeLessThan(1_000);
    const apply = await upload(file, {}).expect(400);
    expect(apply.body.errors).toEqual(dry.body.errors);
    expect((await kit.detail(bom)).tree).toEqual([]);
    // One line past MAX_REFDES, counted across its ranges: a row error of the report.
    const wide = await upload('part_number,qty,refdes\nIMP-R,1,"R1-R6000, C1-C6000"\n', {
      dryRun: 'true',
    }).expect(200);
    expect(wide.body.errors).toEqual([
      { row: 2, column: 'refdes', message: 'more than 10000 reference designators' },
    ]);
  });

  test('an apply with row errors writes nothing: no line, no created part', async () => {
    const res = await upload(withErrors, {}).expect(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', report: { errorCount: 2 } });
    expect((await kit.detail(bom)).tree).toEqual([]);
    const parts = await kit
      .as(t.viewer)
      .get('/v1/parts')
      .query({ ...kit.q, q: 'imp-new' })
      .expect(200);
    expect(parts.body.total).toBe(0);
  });

  test('a clean file replaces the lines in one go and creates the missing part with domain other', async () => {
    const clean = withErrors
      .split('\n')
      .filter((_, i) => i !== 3 && i !== 4)
      .join('\n');
    const res = await upload(clean, { dry_run: 'false' }).expect(200);
    expect(res.body).toMatchObject({ dryRun: false, rows: 3, valid: 3, lines: 3, createdParts: ['imp-new'] });
    const tree = (await kit.detail(bom)).tree;
    expect(tree.map((n) => [n.partNumber, n.qty, n.uom, n.designators.join(','), n.notes])).toEqual([
      ['IMP-R', 4, 'each', 'R1,R2,R3,R4', 'pull-ups'],
      ['imp-new', 2, 'pcs', '', ''],
      ['IMP-C', 2, 'each', 'C1,C2,C3', ''],
    ]);
    const created = await kit
      .as(t.viewer)
      .get('/v1/parts')
      .query({ ...kit.q, q: 'imp-new' })
      .expect(200);
    expect(created.body.items).toEqual([expect.objectContaining({ partNumber: 'imp-new', domain: 'other' })]);
    // Viewers cannot import; a file without the required columns is a 400 naming them.
    await upload(clean, {}, t.viewer).expect(403);
    const formula = await upload('PN,Qty\n"=cmd|\' /C calc\'!A0",1', { dryRun: 'true' }).expect(200);
    expect(formula.body.errors).toEqual([
      expect.objectContaining({
        row: 2,
        column: 'PN',
        message: expect.stringContaining('not a part number'),
      }),
    ]);
    const headless = await upload('name,count\nx,1', {}).expect(400);
    expect(headless.body.detail).toContain('child_part_number');
  });
});
