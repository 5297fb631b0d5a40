import type { Bom, BomDetail, BomNode, Part } from '@hwp/contracts';
import { collabAs, type Stack, type Team, type TestUser } from './collab-test-kit';

/** Parts and BOMs over HTTP for the BOM tests. */
export function bomKit(stack: Stack, t: Team) {
  const as = (user: TestUser) => collabAs(stack.collab.app, user);
  const q = { workspace: t.workspace };
  return {
    as,
    q,
    /** The collaboration host's username of a member. */
    async username(user: TestUser): Promise<string> {
      const [row] = await stack.collab.deps.dataSource.query(
        'SELECT username FROM collab_users WHERE id = $1',
        [user.user.id],
      );
      return row.username;
    },
    async part(partNumber: string, fields: Record<string, unknown> = {}): Promise<Part> {
      const res = await as(t.engineer)
        .post('/v1/parts')
        .send({ workspace: t.workspace, partNumber, name: `${partNumber} name`, ...fields });
      expect(res.status).toBe(201);
      return res.body as Part;
    },
    async bom(assembly: Part, revision: string, fields: Record<string, unknown> = {}): Promise<Bom> {
      const res = await as(t.engineer)
        .post('/v1/boms')
        .send({
          workspace: t.workspace,
          assemblyPartId: assembly.id,
          type: 'engineering',
          revision,
          ...fields,
        });
      expect(res.status).toBe(201);
      return res.body as Bom;
    },
    async lines(bom: Bom, items: Record<string, unknown>[], user = t.engineer): Promise<BomDetail> {
      const res = await as(user).post(`/v1/boms/${bom.id}/items`).query(q).send({ items });
      if (res.status !== 200) throw new Error(`items answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body as BomDetail;
    },
    async detail(bom: Bom): Promise<BomDetail> {
      const res = await as(t.viewer).get(`/v1/boms/${bom.id}`).query(q);
      expect(res.status).toBe(200);
      return res.body as BomDetail;
    },
    async approve(bom: Bom): Promise<void> {
      await as(t.engineer).post(`/v1/boms/${bom.id}/submit`).send(q).expect(200);
      await as(t.manager).post(`/v1/boms/${bom.id}/approve`).send(q).expect(200);
    },
  };
}

/** The tree as `partNumber@level x qty (extended)` lines, for comparisons that read like the BOM. */
export function outline(tree: BomNode[]): string[] {
  return tree.map((n) => `${'  '.repeat(n.level - 1)}${n.partNumber} x${n.qty} (${n.extendedQty})`);
}
