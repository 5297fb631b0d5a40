/**
 * Column headers of the parts import, mapped to the part fields of the interface document
 * (section 2.8; the aliases `pn`, `unit`, `unit_of_measure`, `life_cycle`, `attrs`, `json` are from
 * section 2.9, the rest are common spellings). Matching ignores case, spaces, `_`, `-` and `.`, so
 * `Part Number`, `part_number`, `PART-NUMBER` and `partNumber` are one header.
 *
 * Not columns: `workspace` (a form field of the upload), `revision`, `changeNote` and `data`
 * (they belong to versions, not to the part rows of an import).
 */
export const PART_IMPORT_ALIASES = {
  partNumber: ['part_number', 'pn', 'part_no', 'part_num', 'p/n'],
  name: ['part_name'],
  description: ['desc', 'part_description'],
  domain: ['part_domain'],
  uom: ['unit', 'unit_of_measure', 'units'],
  lifecycle: ['life_cycle', 'lifecycle_state', 'lifecycle_status'],
  manufacturerName: ['manufacturer_name', 'manufacturer', 'mfr', 'mfr_name', 'mfg'],
  manufacturerPartNumber: ['manufacturer_part_number', 'mpn', 'mfr_part_number', 'mfr_pn', 'mfg_part_number'],
  tags: ['tag', 'labels'],
  attributes: ['attrs', 'json', 'attributes_json'],
  unitCost: ['unit_cost', 'cost', 'unit_price', 'price'],
  currency: ['currency_code', 'ccy'],
  rohsCompliant: ['rohs_compliant', 'rohs'],
  reachCompliant: ['reach_compliant', 'reach'],
  conflictMinerals: ['conflict_minerals', 'conflict_mineral_status', 'conflict_minerals_status'],
} as const satisfies Record<string, readonly string[]>;

export type PartImportField = keyof typeof PART_IMPORT_ALIASES;

export interface HeaderMapping<F extends string = string> {
  /** Canonical field -> the original header its values are read from (the first one, on duplicates). */
  columns: Partial<Record<F, string>>;
  /** Headers that match no field, in file order: report them, they are not fatal. */
  unknown: string[];
  /** Fields named by more than one header (`pn` and `Part Number`); only the first is read. */
  duplicates: { field: F; headers: string[] }[];
}

/** Lower case without spaces, `_`, `-` and `.`: the form headers and aliases are compared in. */
export function headerKey(header: string): string {
  return header
    .trim()
    .toLowerCase()
    .replace(/[\s_.-]+/g, '');
}

/**
 * Maps a file's headers to canonical field names: a header matches a field when its key (see
 * `headerKey`) equals the key of the field name or of one of its aliases.
 */
export function normaliseHeaders<F extends string>(
  headers: readonly string[],
  aliases: Readonly<Record<F, readonly string[]>>,
): HeaderMapping<F> {
  const fieldByKey = new Map<string, F>();
  for (const field of Object.keys(aliases) as F[]) {
    for (const name of [field, ...aliases[field]]) {
      const key = headerKey(name);
      const taken = fieldByKey.get(key);
      if (taken !== undefined && taken !== field) {
        throw new Error(`normaliseHeaders: alias "${name}" names both ${taken} and ${field}`);
      }
      fieldByKey.set(key, field);
    }
  }

  const found = new Map<F, string[]>();
  const unknown: string[] = [];
  for (const header of headers) {
    const field = fieldByKey.get(headerKey(header));
    if (field === undefined) {
      unknown.push(header);
      continue;
    }
    const named = found.get(field);
    if (named) named.push(header);
    else found.set(field, [header]);
  }

  const columns: Partial<Record<F, string>> = {};
  const duplicates: { field: F; headers: string[] }[] = [];
  for (const [field, named] of found) {
    columns[field] = named[0];
    if (named.length > 1) duplicates.push({ field, headers: named });
  }
  return { columns, unknown, duplicates };
}
