/** Part domains (section 2.8); `other` is the default. */
export const PART_DOMAINS = ['mechanical', 'electronic', 'electrical', 'chemical', 'other'] as const;
export type PartDomain = (typeof PART_DOMAINS)[number];

/** Part lifecycle values (section 3.3); `prototype` is the default. */
export const PART_LIFECYCLES = ['prototype', 'released', 'on_hold', 'obsolete'] as const;
export type PartLifecycle = (typeof PART_LIFECYCLES)[number];

/** Lifecycle moves allowed through PATCH by a manager+ (DECISIONS.md section 5); `obsolete` is final. */
export const PART_LIFECYCLE_MOVES: Record<PartLifecycle, readonly PartLifecycle[]> = {
  prototype: ['released', 'obsolete'],
  released: ['on_hold', 'obsolete'],
  on_hold: ['released', 'obsolete'],
  obsolete: [],
};

/** Part version statuses (DECISIONS.md section 5): draft -> in_review -> approved | rejected -> draft. */
export const PART_VERSION_STATUSES = ['draft', 'in_review', 'approved', 'rejected'] as const;
export type PartVersionStatus = (typeof PART_VERSION_STATUSES)[number];

/** Sort keys of `GET /v1/parts` (section 4.6). */
export const PART_SORT_KEYS = [
  'part_number',
  'name',
  'domain',
  'lifecycle',
  'manufacturer_part_number',
  'updated_at',
] as const;
export type PartSortKey = (typeof PART_SORT_KEYS)[number];

/**
 * The snake_case spellings of request fields the interface document names (DECISIONS.md section 0),
 * with their camelCase names. Requests may use either; the route renames before validation.
 */
export const PART_SNAKE_CASE_FIELDS: Record<string, string> = {
  part_number: 'partNumber',
  unit_cost: 'unitCost',
  rohs_compliant: 'rohsCompliant',
  reach_compliant: 'reachCompliant',
  conflict_minerals: 'conflictMinerals',
  manufacturer_name: 'manufacturerName',
  manufacturer_part_number: 'manufacturerPartNumber',
  change_note: 'changeNote',
  numbering_rules: 'numberingRules',
  domain_templates: 'domainTemplates',
  currency_rates: 'currencyRates',
};

/** Part numbers: printable, no surrounding spaces. */
export const PART_NUMBER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/#+-]{0,63}$/;
