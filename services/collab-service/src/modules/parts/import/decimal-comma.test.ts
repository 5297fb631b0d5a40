import { collabAs, type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';

/** A CSV as German Excel writes it: `;` between cells, a comma before the decimals. */
const GERMAN = Buffer.from(
  'Teilenummer;name;unit_cost;currency\nDE-1;Schraube M4;0,35;EUR\nDE-2;Mutter M4;12,5;EUR\n'.replace(
    'Teilenummer',
    'part_number',
  ),
);

let stack: Stack;
let t: Team;
beforeAll(async () => {
  stack = await startStack();
  t = await teamWorkspace(stack, 'decimal');
}, 60_000);
afterAll(() => stack?.stop());

function upload(file: Buffer, fields: Record<string, string>, query: Record<string, string> = {}) {
  let req = collabAs(stack.collab.app, t.engineer)
    .post('/v1/parts/import')
    .query(query)
    .field('workspace', t.workspace);
  for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
  return req.attach('file', file, { filename: 'teile.csv', contentType: 'text/csv' });
}

describe('parts import: decimal separator', () => {
  it('refuses decimal commas by default, naming the option', async () => {
    const res = await upload(GERMAN, { dryRun: 'true' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows: 2, valid: 0 });
    expect(res.body.errors[0]).toMatchObject({
      column: 'unit_cost',
      message: expect.stringContaining('decimal=comma'),
    });
  });

  it('reads `0,35` as 0.35 with decimal=comma (form field or query) and stores exact costs', async () => {
    const dry = await upload(GERMAN, { dryRun: 'true' }, { decimal: 'comma' });
    expect(dry.body).toMatchObject({ rows: 2, valid: 2, errorCount: 0 });
    const applied = await upload(GERMAN, { decimal: 'comma' });
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ created: 2, errorCount: 0 });
    const list = await collabAs(stack.collab.app, t.viewer)
      .get('/v1/parts')
      .query({ workspace: t.workspace, q: 'DE-' });
    expect(
      Object.fromEntries(
        list.body.items.map((p: { partNumber: string; unitCost: number }) => [p.partNumber, p.unitCost]),
      ),
    ).toEqual({
      'DE-1': 0.35,
      'DE-2': 12.5,
    });
  });

  it('with decimal=comma a dot (a thousands separator) is refused, not guessed', async () => {
    const file = Buffer.from('part_number;name;unit_cost\nDE-3;Gehäuse;1.234,50\n');
    const res = await upload(file, { dryRun: 'true', decimal: 'comma' });
    expect(res.body.errors[0]).toMatchObject({
      column: 'unit_cost',
      message: expect.stringContaining('no thousands separators'),
    });
    const bad = await upload(file, { dryRun: 'true', decimal: 'semicolon' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('decimal');
  });
});
