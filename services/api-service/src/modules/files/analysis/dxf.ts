/** What a DXF file's header and sections say. */
export interface DxfFacts {
  version: string | null;
  units: string | null;
  bbox: { min: [number, number, number]; max: [number, number, number] } | null;
  layers: number;
  entities: Record<string, number>;
}

/** `$INSUNITS` codes (AutoCAD's list) to unit names. */
const INSUNITS: Record<number, string | null> = {
  0: null,
  1: 'in',
  2: 'ft',
  3: 'mi',
  4: 'mm',
  5: 'cm',
  6: 'm',
  7: 'km',
  8: 'uin',
  9: 'mil',
  10: 'yd',
  11: 'angstrom',
  12: 'nm',
  13: 'um',
  14: 'dm',
  15: 'dam',
  16: 'hm',
  17: 'Gm',
  18: 'au',
  19: 'ly',
  20: 'pc',
};

/** Group code / value pairs of an ASCII DXF (LF or CRLF, values trimmed). */
function* pairs(text: string): Generator<[number, string]> {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const code = Number.parseInt(lines[i].trim(), 10);
    if (!Number.isInteger(code)) return;
    yield [code, lines[i + 1].trim()];
  }
}

/** Entity types counted by name; the rest (not a name, or past this many) as `OTHER`. */
const MAX_ENTITY_TYPES = 64;
const ENTITY_TYPE = /^[A-Za-z0-9_]{1,32}$/;

export function parseDxf(text: string): DxfFacts {
  let version: string | null = null;
  let units: string | null = null;
  const extmin: number[] = [];
  const extmax: number[] = [];
  let layers = 0;
  const entities = new Map<string, number>();
  const countEntity = (type: string) => {
    const key =
      ENTITY_TYPE.test(type) && (entities.has(type) || entities.size < MAX_ENTITY_TYPES) ? type : 'OTHER';
    entities.set(key, (entities.get(key) ?? 0) + 1);
  };
  let section: string | null = null;
  let variable: string | null = null;
  let table: string | null = null;
  let expectSectionName = false;
  for (const [code, value] of pairs(text)) {
    if (code === 0) {
      variable = null;
      if (value === 'SECTION') expectSectionName = true;
      else if (value === 'ENDSEC') section = null;
      else if (section === 'TABLES' && value === 'TABLE') table = null;
      else if (section === 'TABLES' && value === 'LAYER' && table === 'LAYER') layers++;
      else if (section === 'ENTITIES') countEntity(value);
      continue;
    }
    if (code === 2 && expectSectionName) {
      section = value;
      expectSectionName = false;
      continue;
    }
    if (section === 'TABLES' && code === 2 && table === null) table = value;
    if (section !== 'HEADER') continue;
    if (code === 9) {
      variable = value;
      continue;
    }
    if (variable === '$ACADVER' && code === 1) version = value;
    if (variable === '$INSUNITS' && code === 70) units = INSUNITS[Number(value)] ?? null;
    const axis = code === 10 ? 0 : code === 20 ? 1 : code === 30 ? 2 : -1;
    if (axis >= 0 && variable === '$EXTMIN') extmin[axis] = Number(value);
    if (axis >= 0 && variable === '$EXTMAX') extmax[axis] = Number(value);
  }
  const full = (v: number[]) => [0, 1, 2].every((k) => Number.isFinite(v[k]) || k === 2);
  const bbox =
    extmin.length >= 2 && extmax.length >= 2 && full(extmin) && full(extmax) && extmax[0] >= extmin[0]
      ? {
          min: [extmin[0], extmin[1], extmin[2] ?? 0] as [number, number, number],
          max: [extmax[0], extmax[1], extmax[2] ?? 0] as [number, number, number],
        }
      : null;
  return { version, units, bbox, layers, entities: Object.fromEntries(entities) };
}

/**
 * The work the blocks of a drawing may add to its preview, in placed entities (an entity counts once
 * plus once per point, knot or other list element it carries, each time a block places it) plus the
 * drawer's copying (COPIES_PER_UNIT): about 5 s of the worker's time. Over it the file ends `failed`.
 */
export const DXF_WORK_BUDGET = 2_000_000;
/** Block nesting a drawing may use. */
export const DXF_MAX_BLOCK_DEPTH = 16;
/**
 * The drawer (the `dxf` package's denormalise) appends each copy of an INSERT's block to the list
 * so far with `concat`, copying it every time: an INSERT of c copies of n entities copies about
 * c^2 n / 2 references (50,000 copies of one line: 10 s). Copies are counted at this rate per unit.
 */
const COPIES_PER_UNIT = 256;

export class DxfBudgetError extends Error {}

/** The part of the `dxf` package's parse result the budget reads (the drawer's own input). */
export interface ParsedDxf {
  blocks?: { name?: unknown; entities?: unknown[] }[];
  entities?: unknown[];
}

interface DxfEntity {
  type?: unknown;
  block?: unknown;
  rowCount?: unknown;
  columnCount?: unknown;
}

/** An entity's size: itself and every element of the lists it carries (vertices, knots, loops). */
function weightOf(value: unknown, depth = 0): number {
  if (value === null || typeof value !== 'object' || depth > 4) return 0;
  let weight = depth === 0 ? 1 : 0;
  if (Array.isArray(value)) {
    weight += value.length;
    for (const item of value)
      if (item !== null && typeof item === 'object') weight += weightOf(item, depth + 1);
    return weight;
  }
  for (const field of Object.values(value)) weight += weightOf(field, depth + 1);
  return weight;
}

/** The copies an INSERT's loops make (`for r < rowCount, for c < columnCount`; absent means 1). */
function countOf(value: unknown): number {
  if (value === undefined || value === null) return 1;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0;
}

/**
 * The work of drawing `parsed` (the `dxf` package's parse of the file, which the drawer expands), counted
 * without expanding anything: blocks are looked up as the drawer does (the last definition of a name),
 * an INSERT places its block columns x rows times, blocks insert blocks (memoised per block).
 * A 304-byte file can array a block millions of times, and ten nested levels of ten make 10^10.
 * Over DXF_WORK_BUDGET, nested deeper than DXF_MAX_BLOCK_DEPTH or circular: DxfBudgetError.
 */
export function dxfWork(parsed: ParsedDxf): number {
  const blocks = new Map<string, unknown[]>();
  for (const block of parsed.blocks ?? []) blocks.set(String(block.name), block.entities ?? []);
  const over = () =>
    new DxfBudgetError(
      `the drawing expands past its budget of ${DXF_WORK_BUDGET} entities and points (blocks placed too many times)`,
    );
  /** Per block: the entities one placement yields, the work it takes and the levels below it. */
  type Expansion = { placed: number; work: number; height: number };
  const memo = new Map<string, Expansion>();
  const expand = (entities: unknown[], depth: number, path: Set<string>): Expansion => {
    if (depth > DXF_MAX_BLOCK_DEPTH)
      throw new DxfBudgetError(`blocks nest deeper than ${DXF_MAX_BLOCK_DEPTH} levels`);
    let placed = 0;
    let work = 0;
    let height = 0;
    for (const item of entities) {
      const entity = (item ?? {}) as DxfEntity;
      // Each entity of a placed block is copied (cloneDeep) with each placement; the drawing's own
      // entities are its content, bounded by its size and the worker's time, not an expansion.
      if (entity.type !== 'INSERT') {
        if (depth > 0) work += weightOf(entity);
        placed++;
      } else {
        if (depth > 0) work += weightOf(entity);
        const name = String(entity.block);
        const child = blocks.get(name);
        if (!child) continue;
        if (path.has(name)) throw new DxfBudgetError(`block ${name} inserts itself`);
        let each = memo.get(name);
        if (each === undefined) {
          path.add(name);
          each = expand(child, depth + 1, path);
          path.delete(name);
          memo.set(name, each);
        }
        height = Math.max(height, each.height + 1);
        if (depth + height > DXF_MAX_BLOCK_DEPTH)
          throw new DxfBudgetError(`blocks nest deeper than ${DXF_MAX_BLOCK_DEPTH} levels`);
        const copies = countOf(entity.rowCount) * countOf(entity.columnCount);
        // The list so far is copied once per copy, and so is what the copies added before it.
        const copying = copies * placed + (each.placed * copies * (copies + 1)) / 2;
        // Each copy costs something of its own, even of an empty block.
        work += copies * (each.work + 1) + copying / COPIES_PER_UNIT;
        placed += copies * each.placed;
      }
      if (work > DXF_WORK_BUDGET) throw over();
    }
    return { placed, work, height };
  };
  return expand(parsed.entities ?? [], 0, new Set()).work;
}
