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

export function parseDxf(text: string): DxfFacts {
  let version: string | null = null;
  let units: string | null = null;
  const extmin: number[] = [];
  const extmax: number[] = [];
  let layers = 0;
  const entities: Record<string, number> = {};
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
      else if (section === 'ENTITIES') entities[value] = (entities[value] ?? 0) + 1;
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
  return { version, units, bbox, layers, entities };
}

/** Entities a drawing may expand to (blocks inserted, arrays of inserts, nesting) before it is refused. */
export const DXF_MAX_EXPANDED_ENTITIES = 500_000;
/** Block nesting a drawing may use. */
export const DXF_MAX_BLOCK_DEPTH = 16;

export class DxfBudgetError extends Error {}

interface BlockContent {
  /** Entities other than INSERT. */
  plain: number;
  /** The INSERTs: block name and how many copies (columns x rows). */
  inserts: { block: string; copies: number }[];
}

/**
 * How many entities the drawing expands to once every INSERT is resolved (an INSERT with a column
 * and row count places its block that many times; blocks insert blocks), counted without expanding
 * anything and stopping at DXF_MAX_EXPANDED_ENTITIES: a 304-byte file can array a block millions of
 * times, and ten nested levels of ten make 10^10. Over the budget, too deep or circular: DxfBudgetError.
 */
export function dxfExpandedEntities(text: string): number {
  const blocks = new Map<string, BlockContent>();
  const top: BlockContent = { plain: 0, inserts: [] };
  let section: string | null = null;
  let expectSectionName = false;
  let current: BlockContent | null = null;
  let entity: string | null = null;
  let insert: { block: string; columns: number; rows: number } | null = null;
  const endInsert = () => {
    if (insert && current) {
      current.inserts.push({
        block: insert.block,
        copies: Math.max(1, insert.columns) * Math.max(1, insert.rows),
      });
    }
    insert = null;
  };
  for (const [code, value] of pairs(text)) {
    if (code === 0) {
      endInsert();
      entity = value;
      if (value === 'SECTION') expectSectionName = true;
      else if (value === 'ENDSEC') {
        section = null;
        current = null;
      } else if (section === 'BLOCKS' && value === 'BLOCK') current = { plain: 0, inserts: [] };
      else if (section === 'BLOCKS' && value === 'ENDBLK') current = null;
      else if (current && value === 'INSERT') insert = { block: '', columns: 1, rows: 1 };
      else if (current && value !== 'ENDBLK') current.plain++;
      continue;
    }
    if (code === 2 && expectSectionName) {
      section = value;
      expectSectionName = false;
      if (section === 'ENTITIES') current = top;
      continue;
    }
    if (section === 'BLOCKS' && entity === 'BLOCK' && code === 2 && current && !blocks.has(value)) {
      blocks.set(value, current);
      continue;
    }
    if (insert) {
      if (code === 2) insert.block = value;
      else if (code === 70) insert.columns = Number.parseInt(value, 10) || 1;
      else if (code === 71) insert.rows = Number.parseInt(value, 10) || 1;
    }
  }
  endInsert();
  const memo = new Map<string, number>();
  const expand = (content: BlockContent, depth: number, path: Set<string>): number => {
    if (depth > DXF_MAX_BLOCK_DEPTH)
      throw new DxfBudgetError(`blocks nest deeper than ${DXF_MAX_BLOCK_DEPTH} levels`);
    let total = content.plain;
    for (const { block, copies } of content.inserts) {
      const child = blocks.get(block);
      if (!child) continue;
      if (path.has(block)) throw new DxfBudgetError(`block ${block} inserts itself`);
      let each = memo.get(block);
      if (each === undefined) {
        path.add(block);
        each = expand(child, depth + 1, path);
        path.delete(block);
        memo.set(block, each);
      }
      total += copies * each;
      if (total > DXF_MAX_EXPANDED_ENTITIES) {
        throw new DxfBudgetError(`the drawing expands to more than ${DXF_MAX_EXPANDED_ENTITIES} entities`);
      }
    }
    return total;
  };
  return expand(top, 0, new Set());
}
