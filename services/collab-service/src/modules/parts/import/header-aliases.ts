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
