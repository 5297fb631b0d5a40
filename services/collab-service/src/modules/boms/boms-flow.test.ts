import type { Bom, BomDetail, BomDiff, EffectivityReport, Part } from '@hwp/contracts';
import { bomKit } from '#test/boms-kit';
import { type Stack, startStack, type Team, teamWorkspace } from '#test/collab-test-kit';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

describe('roles and the approval flow', () => {
  let t: Team;
  let kit: ReturnType<typeof bomKit>;
  let asm: Part;
  let bolt: Part;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'bomflow');
    kit = bomKit(stack, t);
    asm = await kit.part('FLOW-ASM');
    bolt = await kit.part('FLOW-BOLT');
  });

  test('viewers read, engineers write and submit, managers approve; a non-draft BOM refuses edits', async () => {
    const body = { workspace: t.workspace, assemblyPartId: asm.id, type: 'engineering', revision: 'A' };
    await kit.as(t.viewer).post('/v1/boms').send(body).expect(403);
    const created = await kit
      .as(t.engineer)
      .post('/v1/boms')
      .send({ ...body, change_note: 'first' })
      .expect(201);
    const bom = created.body as Bom;
    expect(bom).toMatchObject({
      status: 'draft',
      changeNote: 'first',
      createdBy: await kit.username(t.engineer),
    });
    await kit
      .as(t.engineer)
      .post('/v1/boms')
      .send({ ...body, revision: 'a' })
      .expect(409);
    await kit.as(t.viewer).post(`/v1/boms/${bom.id}/items`).query(kit.q).send({ items: [] }).expect(403);
    await kit.lines(bom, [{ childPartId: bolt.id, qty: 2 }]);

    await kit.as(t.engineer).post(`/v1/boms/${bom.id}/approve`).send(kit.q).expect(403);
    await kit.as(t.engineer).post(`/v1/boms/${bom.id}/submit`).send(kit.q).expect(200);
    const frozen = await kit
      .as(t.engineer)
      .post(`/v1/boms/${bom.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartId: bolt.id, qty: 3 }] });
    expect(frozen.status).toBe(409);
    expect(frozen.body).toMatchObject({ code: 'conflict', status: 'in_review' });
    const rejected = await kit
      .as(t.manager)
      .post(`/v1/boms/${bom.id}/reject`)
      .send({ ...kit.q, reason: 'qty' })
      .expect(200);
    expect(rejected.body).toMatchObject({
      status: 'rejected',
      rejectionReason: 'qty',
      rejectedBy: await kit.username(t.manager),
    });
    // Editing a rejected BOM returns it to draft.
    const edited = await kit.lines(bom, [{ childPartId: bolt.id, qty: 3 }]);
    expect(edited.status).toBe('draft');
    await kit.approve(bom);
    const approved = await kit
      .as(t.engineer)
      .post(`/v1/boms/${bom.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartId: bolt.id, qty: 1 }] });
    expect(approved.status).toBe(409);
    expect(approved.body.detail).toContain('approved and cannot change');
    await kit.as(t.manager).post(`/v1/boms/${bom.id}/approve`).send(kit.q).expect(409);

    const list = await kit
      .as(t.viewer)
      .get('/v1/boms')
      .query({ ...kit.q, assemblyPn: 'flow-asm' })
      .expect(200);
    expect(list.body).toMatchObject({
      total: 1,
      page: 1,
      items: [{ id: bom.id, status: 'approved', itemCount: 2 }],
    });

    const events: { data: { action: string } }[] = await stack.collab.deps.dataSource.query(
      `SELECT e.data FROM collab_events e JOIN workspaces w ON w.id = e.workspace_id
        WHERE w.name = $1 AND e.type = 'bom' ORDER BY e.id`,
      [t.workspace],
    );
    expect(events.map((e) => e.data.action)).toEqual([
      'created',
      'items.updated',
      'submitted',
      'rejected',
      'items.updated',
      'submitted',
      'approved',
    ]);
    // Submitting asked the managers for approval, approving and rejecting told the submitter, through the outbox.
    const mails: { to: string; template: string }[] = await stack.collab.deps.dataSource.query(
      `SELECT envelope->'data'->>'to' AS to, envelope->'data'->>'template' AS template FROM outbox
        WHERE envelope->>'workspace' = $1 AND envelope->'data'->>'template' LIKE 'bom.%'`,
      [t.workspace],
    );
    const emails = await stack.collab.deps.dataSource.query(
      'SELECT id, email FROM collab_users WHERE id = ANY($1::uuid[])',
      [[t.owner.user.id, t.manager.user.id, t.engineer.user.id]],
    );
    const emailOf = (user: { user: { id: string } }) =>
      emails.find((e: { id: string }) => e.id === user.user.id).email;
    const sent = (template: string) =>
      mails
        .filter((m) => m.template === template)
        .map((m) => m.to)
        .sort();
    const managers = [emailOf(t.owner), emailOf(t.manager)].sort();
    expect(sent('bom.submitted')).toEqual([...managers, ...managers].sort());
    expect(sent('bom.rejected')).toEqual([emailOf(t.engineer)]);
    expect(sent('bom.approved')).toEqual([emailOf(t.engineer)]);
  });

  test('another workspace’s BOM and lines are 404; bad lines are 400 naming the field', async () => {
    const other = await teamWorkspace(stack, 'bomother');
    const bom = await kit.bom(asm, 'ISO');
    await kit.as(other.owner).get(`/v1/boms/${bom.id}`).query({ workspace: other.workspace }).expect(404);
    await kit.as(other.owner).get(`/v1/boms/${bom.id}`).query(kit.q).expect(404);
    const foreignPart = await bomKit(stack, other).part('FOREIGN-1');
    const foreign = await kit
      .as(t.engineer)
      .post(`/v1/boms/${bom.id}/items`)
      .query(kit.q)
      .send({ items: [{ childPartId: foreignPart.id, qty: 1 }] });
    expect(foreign.status).toBe(404);
    for (const [item, field] of [
      [{ childPartId: bolt.id, qty: 0 }, 'items.0.qty'],
      [{ childPartId: bolt.id, qty: 1, refdes: 'R5-R1' }, 'items[0].refdes'],
      [{ childPartId: bolt.id, qty: 1, refdes: 'not a designator!' }, 'items[0].refdes'],
      [{ childPartId: bolt.id, qty: 1, date_from: '2026-05-01', date_to: '2026-01-01' }, 'items[0].dateTo'],
      [{ qty: 1 }, 'items[0].childPartId'],
      [{ childPartId: bolt.id }, 'items[0].qty'],
      [{ _op: 'delete' }, 'items[0].id'],
    ] as const) {
      const res = await kit
        .as(t.engineer)
        .post(`/v1/boms/${bom.id}/items`)
        .query(kit.q)
        .send({ items: [item] });
      expect({ status: res.status, fields: res.body.errors?.map((e: { field: string }) => e.field) }).toEqual(
        {
          status: 400,
          fields: [field],
        },
      );
    }
    // All or nothing: a bad second line leaves the first unwritten.
    await kit
      .as(t.engineer)
      .post(`/v1/boms/${bom.id}/items`)
      .query(kit.q)
      .send({
        items: [
          { childPartId: bolt.id, qty: 1 },
          { childPartId: bolt.id, qty: -1 },
        ],
      })
      .expect(400);
    expect((await kit.detail(bom)).tree).toEqual([]);
  });

  test('alternates: engineers propose, only managers approve', async () => {
    const bom = await kit.bom(asm, 'ALT');
    const alt = await kit.part('FLOW-ALT');
    const detail = await kit.lines(bom, [{ childPartId: bolt.id, qty: 1 }]);
    const itemId = detail.tree[0].itemId;
    const path = `/v1/boms/${bom.id}/items/${itemId}/alternates`;
    await kit
      .as(t.engineer)
      .post(path)
      .query(kit.q)
      .send({ alternates: [{ partId: alt.id, approval: 'approved', rationale: 'same footprint' }] })
      .expect(403);
    const proposed = await kit
      .as(t.engineer)
      .post(path)
      .query(kit.q)
      .send({ alternates: [{ part_id: alt.id, approval: 'conditional', rationale: 'same footprint' }] })
      .expect(200);
    expect((proposed.body as BomDetail).tree[0].alternates).toEqual([
      {
        partId: alt.id,
        partNumber: 'FLOW-ALT',
        approval: 'conditional',
        rationale: 'same footprint',
        proposedBy: await kit.username(t.engineer),
        approvedBy: null,
      },
    ]);
    const approved = await kit
      .as(t.manager)
      .post(path)
      .query(kit.q)
      .send({ alternates: [{ partId: alt.id, approval: 'approved' }] })
      .expect(200);
    expect((approved.body as BomDetail).tree[0].alternates[0]).toMatchObject({
      approval: 'approved',
      rationale: 'same footprint',
      proposedBy: await kit.username(t.engineer),
      approvedBy: await kit.username(t.manager),
    });
    await kit
      .as(t.engineer)
      .post(path)
      .query(kit.q)
      .send({ alternates: [{ partId: bolt.id, approval: 'conditional' }] })
      .expect(400);
  });
});

describe('diff, effectivity and derive-mbom', () => {
  let t: Team;
  let kit: ReturnType<typeof bomKit>;
  let p: Record<string, Part>;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'bomdiff');
    kit = bomKit(stack, t);
    p = {};
    for (const pn of ['D-ASM', 'D-R', 'D-C', 'D-U', 'D-X', 'D-PH', 'D-IN']) p[pn] = await kit.part(pn);
  });

  test('the diff of two revisions lists exactly the changed lines and fields', async () => {
    const a = await kit.bom(p['D-ASM'], 'A');
    await kit.lines(a, [
      { childPartId: p['D-R'].id, qty: 4, refdes: 'R1-R4' },
      { childPartId: p['D-C'].id, qty: 2, notes: 'X7R' },
      { childPartId: p['D-U'].id, qty: 1 },
    ]);
    const b = await kit.bom(p['D-ASM'], 'B');
    await kit.lines(b, [
      { childPartId: p['D-R'].id, qty: 4, refdes: 'R1-R4' },
      { childPartId: p['D-C'].id, qty: 3, notes: 'X5R', dateFrom: '2027-01-01' },
      { childPartId: p['D-X'].id, qty: 1 },
    ]);
    const res = await kit
      .as(t.viewer)
      .get(`/v1/boms/${a.id}/diff`)
      .query({ ...kit.q, leftRev: 'A', rightRev: 'B' })
      .expect(200);
    const diff = res.body as BomDiff;
    expect(diff.left).toEqual({ id: a.id, revision: 'A' });
    expect(diff.added.map((l) => l.key)).toEqual(['D-X']);
    expect(diff.removed.map((l) => l.key)).toEqual(['D-U']);
    expect(diff.changed).toHaveLength(1);
    expect(diff.changed[0].key).toBe('D-C');
    expect(diff.changed[0].changes).toEqual([
      { field: 'qty', from: 2, to: 3 },
      { field: 'notes', from: 'X7R', to: 'X5R' },
      {
        field: 'effectivity',
        from: { dateFrom: null, dateTo: null, serialFrom: null, serialTo: null, lotFrom: null, lotTo: null },
        to: {
          dateFrom: '2027-01-01',
          dateTo: null,
          serialFrom: null,
          serialTo: null,
          lotFrom: null,
          lotTo: null,
        },
      },
    ]);
    await kit
      .as(t.viewer)
      .get(`/v1/boms/${a.id}/diff`)
      .query({ ...kit.q, leftRev: 'A', rightRev: 'Z' })
      .expect(404);
  });

  test('overlapping effectivity is reported with the line it overlaps; adjacent ranges are valid', async () => {
    const bom = await kit.bom(p['D-ASM'], 'EFF');
    const detail = await kit.lines(bom, [
      { childPartId: p['D-U'].id, qty: 1, refdes: 'U1', serialFrom: 1, serialTo: 100 },
      { childPartId: p['D-X'].id, qty: 1, refdes: 'U2', dateFrom: '2026-01-01', dateTo: '2026-06-30' },
    ]);
    const [u1, u2] = detail.tree;
    const check = (body: Record<string, unknown>) =>
      kit.as(t.engineer).post(`/v1/boms/${bom.id}/effectivity/validate`).query(kit.q).send(body);
    const overlapping = await check({
      partId: p['D-U'].id,
      effectivity: { serial_from: 50, serial_to: 150 },
    });
    expect(overlapping.status).toBe(200);
    const report = overlapping.body as EffectivityReport;
    expect(report.valid).toBe(false);
    expect(report.overlaps).toEqual([
      expect.objectContaining({
        itemId: u1.itemId,
        partNumber: 'D-U',
        dimensions: ['serial'],
        serialFrom: 1,
        serialTo: 100,
      }),
    ]);
    expect(report.overlaps[0].message).toContain(u1.itemId);
    const after = await check({ partId: p['D-U'].id, effectivity: { serialFrom: 101, serialTo: 200 } });
    expect(after.body).toEqual({ valid: true, overlaps: [] });
    // The same designator on another part overlaps by date; the line is not compared with itself.
    const byRefdes = await check({
      itemId: u1.itemId,
      refdes: 'U2',
      effectivity: { dateFrom: '2026-06-30' },
    });
    expect(byRefdes.body.overlaps.map((o: { itemId: string }) => o.itemId)).toEqual([u2.itemId]);
    const itself = await check({ itemId: u2.itemId, effectivity: { dateFrom: '2026-07-01' } });
    expect(itself.body).toEqual({ valid: true, overlaps: [] });
    await check({ partId: p['D-U'].id, effectivity: { dateFrom: '2026-13-45' } }).expect(400);
    await check({ effectivity: {} }).expect(400);
  });

  test('derive-mbom copies lines with alternates and effectivity and flattens phantoms', async () => {
    const phantom = await kit.bom(p['D-PH'], 'A');
    await kit.lines(phantom, [
      { childPartId: p['D-IN'].id, qty: 2 },
      { childPartId: p['D-C'].id, qty: 1 },
    ]);
    const ebom = await kit.bom(p['D-ASM'], 'E1');
    await kit.lines(ebom, [
      { childPartId: p['D-R'].id, qty: 4, refdes: 'R1-R4', lotFrom: 'L1', alternates: [] },
      { childPartId: p['D-PH'].id, qty: 3, attributes: { phantom: true } },
    ]);
    const res = await kit
      .as(t.engineer)
      .post(`/v1/boms/${ebom.id}/derive-mbom`)
      .send({ ...kit.q, revision: 'M1' })
      .expect(201);
    const mbom = res.body as Bom;
    expect(mbom).toMatchObject({
      type: 'manufacturing',
      revision: 'M1',
      sourceBomId: ebom.id,
      status: 'draft',
    });
    const tree = (await kit.detail(mbom)).tree.map((n) => [
      n.partNumber,
      n.qty,
      n.designators.join(','),
      n.lotFrom,
    ]);
    expect(tree).toEqual([
      ['D-R', 4, 'R1,R2,R3,R4', 'L1'],
      ['D-IN', 6, '', null],
      ['D-C', 3, '', null],
    ]);
    await kit
      .as(t.engineer)
      .post(`/v1/boms/${ebom.id}/derive-mbom`)
      .send({ ...kit.q, revision: 'M1' })
      .expect(409);
    await kit
      .as(t.engineer)
      .post(`/v1/boms/${mbom.id}/derive-mbom`)
      .send({ ...kit.q, revision: 'M2' })
      .expect(409);
  });
});
