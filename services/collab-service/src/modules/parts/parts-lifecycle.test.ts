import type { PartDetail, PartVersion } from '@hwp/contracts';
import { type Stack, startStack, type TestUser } from '#test/collab-test-kit';
import { partsKit } from '#test/parts-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

const { as, team, createPart } = partsKit(() => stack);

describe('parts: lifecycle, detail and history', () => {
  test('lifecycle changes need a manager and follow the allowed moves', async () => {
    const t = await team();
    const part = await createPart(t, { partNumber: 'L-1' });
    const patch = (user: TestUser, body: Record<string, unknown>) =>
      as(user).patch(`/v1/parts/${part.id}`).query({ workspace: t.workspace }).send(body);

    expect((await patch(t.engineer, { lifecycle: 'released' })).status).toBe(403);
    expect((await patch(t.engineer, { name: 'Renamed', tags: ['a'] })).body).toMatchObject({
      name: 'Renamed',
    });
    expect((await patch(t.manager, { lifecycle: 'on_hold' })).status).toBe(409);
    const released = await patch(t.manager, { lifecycle: 'released' });
    expect(released.status).toBe(200);
    expect(released.body.lifecycle).toBe('released');
    expect((await patch(t.manager, { lifecycle: 'prototype' })).status).toBe(409);
    expect((await patch(t.manager, { lifecycle: 'on_hold' })).status).toBe(200);
    expect((await patch(t.manager, { lifecycle: 'obsolete' })).status).toBe(200);
    expect((await patch(t.manager, { lifecycle: 'released' })).status).toBe(409);

    const detail = await as(t.viewer)
      .get(`/v1/parts/${part.id}`)
      .query({ workspace: t.workspace })
      .expect(200);
    const history = (detail.body as PartDetail).history;
    expect(history.map((h) => h.action)).toEqual([
      'created',
      'updated',
      'lifecycle',
      'lifecycle',
      'lifecycle',
    ]);
    expect(history[1].changes).toMatchObject({
      name: { from: 'Part', to: 'Renamed' },
      tags: { from: [], to: ['a'] },
    });
    expect(history[2].changes).toEqual({ lifecycle: { from: 'prototype', to: 'released' } });

    const other = await team();
    await as(other.owner).get(`/v1/parts/${part.id}`).query({ workspace: other.workspace }).expect(404);
  });

  test('version flow: submit, reject, edit back to draft, approve; invalid moves 409; approved immutable', async () => {
    const t = await team();
    const part = await createPart(t, { partNumber: 'V-1' });
    const base = `/v1/parts/${part.id}/versions`;
    const q = { workspace: t.workspace };
    const created = await as(t.engineer)
      .post(base)
      .query(q)
      .send({ revision: 'A', change_note: 'first', data: { x: 1 } });
    expect(created.status).toBe(201);
    const v = created.body as PartVersion;
    expect(v).toMatchObject({ revision: 'A', status: 'draft', changeNote: 'first', data: { x: 1 } });
    expect((await as(t.engineer).post(base).query(q).send({ revision: 'a' })).status).toBe(409);

    const act = (user: TestUser, action: string, body: object = {}) =>
      as(user).post(`${base}/${v.id}/${action}`).query(q).send(body);
    expect((await act(t.manager, 'approve')).status).toBe(409); // draft
    expect((await act(t.engineer, 'submit')).body.status).toBe('in_review');
    expect((await act(t.engineer, 'submit')).status).toBe(409);
    expect((await act(t.engineer, 'approve')).status).toBe(403);
    expect(
      (
        await as(t.engineer)
          .patch(`${base}/${v.id}`)
          .query(q)
          .send({ data: { x: 2 } })
      ).status,
    ).toBe(409);
    const rejected = await act(t.manager, 'reject', { reason: 'wrong drawing' });
    expect(rejected.body).toMatchObject({ status: 'rejected', rejectionReason: 'wrong drawing' });
    expect((await act(t.engineer, 'submit')).status).toBe(409);
    const edited = await as(t.engineer)
      .patch(`${base}/${v.id}`)
      .query(q)
      .send({ data: { x: 3 } });
    expect(edited.body).toMatchObject({ status: 'draft', data: { x: 3 }, rejectedAt: null });
    await act(t.engineer, 'submit').expect(200);
    const approved = await act(t.manager, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('approved');
    expect(approved.body.approvedAt).toEqual(expect.any(String));
    expect(approved.body.approvedBy).toEqual(expect.any(String));
    expect(
      (
        await as(t.engineer)
          .patch(`${base}/${v.id}`)
          .query(q)
          .send({ data: { x: 4 } })
      ).status,
    ).toBe(409);
    expect((await act(t.manager, 'reject')).status).toBe(409);

    const versions = await as(t.viewer).get(base).query(q).expect(200);
    expect(versions.body.items).toHaveLength(1);
    const detail = (await as(t.viewer).get(`/v1/parts/${part.id}`).query(q).expect(200)).body as PartDetail;
    expect(detail.versions.map((x) => x.status)).toEqual(['approved']);
    expect(detail.history.map((h) => h.action)).toEqual([
      'created',
      'version.created',
      'version.submitted',
      'version.rejected',
      'version.updated',
      'version.submitted',
      'version.approved',
    ]);
    const events: { type: string; data: { action: string } }[] = await stack.collab.deps.dataSource.query(
      `SELECT e.type, e.data FROM collab_events e JOIN workspaces w ON w.id = e.workspace_id
        WHERE w.name = $1 ORDER BY e.id`,
      [t.workspace],
    );
    // Every change, the create included (DECISIONS.md section 7).
    expect(events.filter((e) => e.type === 'part')).toHaveLength(7);

    await as(t.viewer).get(`/v1/parts/${part.id}/where-used`).query(q).expect(200, { items: [] });
  });
});

describe('parts: numbering rules', () => {
  test('20 concurrent creates without a part number get 20 distinct sequential numbers', async () => {
    const t = await team();
    await as(t.engineer)
      .post(`/v1/workspaces/${t.workspace}/bom-settings`)
      .send({ numbering_rules: { other: { prefix: 'P-', width: 5 } } })
      .expect(403);
    const saved = await as(t.manager)
      .post(`/v1/workspaces/${t.workspace}/bom-settings`)
      .send({ numbering_rules: { other: { prefix: 'P-', width: 5 } } });
    expect(saved.status).toBe(200);
    expect(saved.body.numberingRules).toEqual({ other: { prefix: 'P-', width: 5 } });
    expect(saved.body.domainTemplates.mechanical.required).toEqual(['material', 'finish', 'tolerance']);

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        as(t.engineer)
          .post('/v1/parts')
          .send({ workspace: t.workspace, name: `n${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const got = results.map((r) => r.body.partNumber as string).sort();
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `P-${String(i + 1).padStart(5, '0')}`));

    const bad = await as(t.engineer)
      .post('/v1/parts')
      .send({ workspace: t.workspace, partNumber: 'P-12', name: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('partNumber');
    await createPart(t, { partNumber: 'P-00021' });
    expect((await createPart(t, {})).partNumber).toBe('P-00022');
    const noRule = await as(t.engineer)
      .post('/v1/parts')
      .send({ workspace: t.workspace, name: 'x', domain: 'electronic' });
    expect(noRule.status).toBe(400);

    const settings = await as(t.viewer).get(`/v1/workspaces/${t.workspace}/bom-settings`).expect(200);
    expect(settings.body.numberingRules.other).toEqual({ prefix: 'P-', width: 5 });
    const invalid = await as(t.manager)
      .post(`/v1/workspaces/${t.workspace}/bom-settings`)
      .send({ domain_templates: { electrical: { required: [], schema: { type: 'nope' } } } });
    expect(invalid.status).toBe(400);
  });
});
