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
