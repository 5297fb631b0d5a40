/**
 * Spreadsheet headers to canonical field names, for any import (parts, BOMs): matching ignores case,
 * spaces, `_`, `-` and `.`, so `Part Number`, `part_number`, `PART-NUMBER` and `partNumber` are one header.
 */

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
