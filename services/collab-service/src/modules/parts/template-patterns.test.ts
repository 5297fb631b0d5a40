import {
  collabAs,
  type Stack,
  startStack,
  type Team,
  type TestUser,
  teamWorkspace,
} from '#test/collab-test-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

const as = (user: TestUser) => collabAs(stack.collab.app, user);

const settingsOf = (t: Team) => `/v1/workspaces/${t.workspace}/bom-settings`;

describe('patterns in domain templates (ReDoS)', () => {
  test('a template whose pattern can backtrack catastrophically is refused with 400 naming where the pattern is', async () => {
    const t = await teamWorkspace(stack, 'redos');
    const res = await as(t.manager)
      .post(settingsOf(t))
      .send({
        domain_templates: {
          other: {
            required: [],
            schema: {
              type: 'object',
              properties: {
                code: { type: 'string', pattern: '^(a+)+$' },
                nested: { type: 'array', items: { type: 'string', pattern: '^(\\w|\\d)*!$' } },
              },
              patternProperties: { '^(x|x)*y$': { type: 'string' } },
            },
          },
        },
      });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    const fields = (res.body.errors as { field: string; message: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual([
      'domainTemplates.other.schema.patternProperties["^(x|x)*y$"]',
      'domainTemplates.other.schema.properties.code.pattern',
      'domainTemplates.other.schema.properties.nested.items.pattern',
    ]);
    expect(res.body.errors[0].message).toMatch(/backtrack/);
    // Nothing was stored.
    const stored = await as(t.viewer).get(settingsOf(t)).expect(200);
    expect(stored.body.updatedAt).toBeNull();

    // Lookarounds and backreferences cannot run in linear time: refused too, by path.
    const lookaround = await as(t.manager)
      .post(settingsOf(t))
      .send({
        domainTemplates: {
          other: { required: [], schema: { properties: { a: { pattern: '^(?=x)x(\\d)\\1$' } } } },
        },
      });
    expect(lookaround.status).toBe(400);
    expect(lookaround.body.errors).toEqual([
      {
        field: 'domainTemplates.other.schema.properties.a.pattern',
        message: expect.stringMatching(/linear/),
      },
    ]);
  });

  test('a safe pattern is stored and enforced on part writes', async () => {
    const t = await teamWorkspace(stack, 'redos');
    const schema = {
      type: 'object',
      properties: { code: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}(\\.\\d+)*$' } },
      patternProperties: { '^x_[a-z]+$': { type: 'number' } },
    };
    const saved = await as(t.manager)
      .post(settingsOf(t))
      .send({ domainTemplates: { other: { required: ['code'], schema } } });
    expect(saved.status).toBe(200);
    expect(saved.body.domainTemplates.other.schema).toEqual(schema);

    const good = await as(t.engineer)
      .post('/v1/parts')
      .send({
        workspace: t.workspace,
        partNumber: 'OK-1',
        name: 'ok',
        attributes: { code: 'AB-123.4.5', x_len: 3 },
      });
    expect(good.status).toBe(201);
    const bad = await as(t.engineer)
      .post('/v1/parts')
      .send({
        workspace: t.workspace,
        partNumber: 'BAD-1',
        name: 'bad',
        attributes: { code: 'ab-123', x_len: 'long' },
      });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'attributes.code',
      'attributes.x_len',
    ]);
  });

  test('a catastrophic pattern stored before the check existed runs in linear time: no stall, the attribute is refused', async () => {
    const t = await teamWorkspace(stack, 'redos');
    // Written straight to the table, as a template saved before patterns were checked would be.
    await stack.collab.deps.dataSource.query(
      `INSERT INTO bom_settings (workspace_id, numbering_rules, domain_templates, updated_by, updated_at)
       VALUES ($1, '{}', $2, $3, now())`,
      [
        t.id,
        JSON.stringify({
          other: {
            required: [],
            enforce: true,
            schema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } } },
          },
        }),
        t.manager.user.id,
      ],
    );
    // 60 characters: on a backtracking engine about 2^60 steps (years); answered here at once, since
    // templates run on RE2. That this test finishes at all is the proof.
    const res = await as(t.engineer)
      .post('/v1/parts')
      .send({
        workspace: t.workspace,
        partNumber: 'R-1',
        name: 'x',
        attributes: { code: `${'a'.repeat(60)}!` },
      });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'attributes.code', message: expect.stringContaining('pattern') },
    ]);

    // A long attribute (100,000 characters, over the per-part budget) is refused without being read.
    const long = await as(t.engineer)
      .post('/v1/parts')
      .send({
        workspace: t.workspace,
        partNumber: 'R-2',
        name: 'x',
        attributes: { code: `${'a'.repeat(100_000)}!` },
      });
    expect(long.status).toBe(400);
    expect(long.body.errors).toEqual([{ field: 'attributes', message: expect.stringMatching(/too long/) }]);

    const fine = await as(t.engineer)
      .post('/v1/parts')
      .send({ workspace: t.workspace, partNumber: 'R-3', name: 'x', attributes: { code: 'aaaa' } });
    expect(fine.status).toBe(201);
  });
});
