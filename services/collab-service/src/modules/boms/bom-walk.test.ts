import { assembleTree, type LineRow, presentNode, type TreeRoot } from './bom-tree';
import { lineNodeFields, nodeOf, TreeWalk } from './bom-walk';

/** A small deterministic generator, so a failing shape can be run again. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const uuid = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;

/**
 * Lines of `boms` BOMs over `parts` parts: each BOM's lines name random parts, some of which have a BOM
 * of their own (shared sub-assemblies), some lines nested under others, some costs missing, and with
 * `cycles` some BOMs contain a part whose BOM contains them again.
 */
function shape(seed: number, cycles: boolean): { lines: LineRow[]; root: TreeRoot } {
  const next = random(seed);
  const parts = 12;
  const bomOfPart = new Map<number, number>([[0, 0]]);
  for (let p = 1; p < 6; p++) bomOfPart.set(p, p);
  let id = 1000;
  const lines: LineRow[] = [];
  for (const [assembly, bom] of bomOfPart) {
    const count = 2 + Math.floor(next() * 4);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      // Without cycles a BOM names only parts after its own, so the structure is a DAG.
      const lowest = cycles ? 1 : assembly + 1;
      const part = lowest + Math.floor(next() * (parts - lowest));
      const lineId = uuid(++id);
      const nested = ids.length > 0 && next() < 0.2 ? ids[Math.floor(next() * ids.length)] : null;
      ids.push(lineId);
      const refs = next() < 0.3 ? ['R1', 'R2'] : [];
      lines.push({
        id: lineId,
        bom_id: uuid(bom),
        bom_revision: 'A',
        parent_item_id: nested,
        child_part_id: uuid(100 + part),
        child_version_id: null,
        qty: String(1 + Math.floor(next() * 3)),
        uom: 'each',
        refdes: refs,
        notes: '',
        sort_index: Math.floor(next() * 3),
        attributes: {},
        date_from: null,
        date_to: null,
        serial_from: null,
        serial_to: null,
        lot_from: null,
        lot_to: null,
        sub_bom_id: bomOfPart.has(part) ? uuid(bomOfPart.get(part) as number) : null,
        part_number: `P-${part}`,
        name: `Part ${part}`,
        unit_cost: next() < 0.15 ? null : (next() * 10).toFixed(2),
        currency: next() < 0.2 ? 'USD' : 'EUR',
        rohs_compliant: next() >= 0.1,
        reach_compliant: null,
        conflict_minerals: null,
        alternates: [],
      });
    }
  }
  const root = {
    id: uuid(0),
    workspaceId: uuid(1),
    type: 'EBOM',
    assemblyPartId: uuid(100),
    assemblyPartNumber: 'P-0',
  };
  return { lines, root: root as TreeRoot };
}

describe('the walk of a tree', () => {
  test.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'gives the nodes the tree read builds (shape %i, with and without cycles)',
    (seed) => {
      for (const cycles of [false, true]) {
        const { lines, root } = shape(seed, cycles);
        const built = assembleTree(lines, root).nodes.map(presentNode);
        const walked = [...new TreeWalk(lines, root).occurrences()].map((o) =>
          nodeOf(o, lineNodeFields(o.facts)),
        );
        expect(walked.length).toBeGreaterThan(0);
        expect(walked).toEqual(built);
        // Counted without walking: exact, and past a limit only that limit and one.
        const walk = new TreeWalk(lines, root);
        expect(walk.countOccurrences(1_000_000)).toBe(built.length);
        expect(walk.countOccurrences(built.length - 1)).toBe(built.length);
      }
    },
  );

  test('reads each line once however often a shared sub-assembly repeats it', () => {
    const { lines, root } = shape(3, false);
    const walk = new TreeWalk(lines, root);
    const occurrences = [...walk.occurrences()];
    const facts = new Set(occurrences.map((o) => o.facts));
    expect(occurrences.length).toBeGreaterThan(facts.size);
    expect(facts.size).toBeLessThanOrEqual(lines.length);
  });
});
