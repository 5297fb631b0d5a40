/** What a STEP (ISO 10303-21) file's text says of itself. */
export interface StepFacts {
  software: string | null;
  schema: string | null;
  units: string | null;
  /** PRODUCT entities: parts and assemblies. */
  products: number;
  /** NEXT_ASSEMBLY_USAGE_OCCURRENCE entities: parts placed in assemblies. */
  assemblyUsages: number;
  author: string | null;
}

/** The string arguments of the first `NAME(...)` in the header, with `''` unescaped. */
function headerStrings(text: string, name: string): (string | null)[] {
  const at = text.search(new RegExp(`\\b${name}\\s*\\(`, 'i'));
  if (at < 0) return [];
  const out: (string | null)[] = [];
  let i = text.indexOf('(', at) + 1;
  let depth = 1;
  while (i < text.length && depth > 0) {
    const c = text[i];
    if (c === "'") {
      let value = '';
      i++;
      while (i < text.length) {
        if (text[i] === "'" && text[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (text[i] === "'") break;
        else value += text[i++];
      }
      out.push(value);
    } else if (c === '$' && depth === 1) out.push(null);
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    i++;
  }
  return out;
}

const PREFIXES: Record<string, string> = { MILLI: 'mm', CENTI: 'cm', KILO: 'km', MICRO: 'um', DECI: 'dm' };
const CONVERSION_UNITS: Record<string, string> = {
  INCH: 'in',
  FOOT: 'ft',
  MILLIMETRE: 'mm',
  MILLIMETER: 'mm',
};

/** Reads the header (FILE_NAME, FILE_SCHEMA), the length unit and the product structure counts. */
export function parseStep(text: string): StepFacts {
  const header = text.slice(0, Math.max(text.search(/\bENDSEC\s*;/i), 0) || 20_000);
  // FILE_NAME(name, time_stamp, (author), (organization), preprocessor_version, originating_system, authorization)
  const fileName = headerStrings(header, 'FILE_NAME');
  const originating = fileName[fileName.length - 2] ?? null;
  const preprocessor = fileName[fileName.length - 3] ?? null;
  const software = (originating?.trim() || preprocessor?.trim()) ?? null;
  const author = fileName[2]?.trim() || null;
  const schema = headerStrings(header, 'FILE_SCHEMA')[0] ?? null;

  let units: string | null = null;
  const conversion = /CONVERSION_BASED_UNIT\s*\(\s*'([^']+)'/i.exec(text);
  const si =
    /LENGTH_UNIT\s*\(\s*\)\s*NAMED_UNIT\s*\([^)]*\)\s*SI_UNIT\s*\(\s*(\.\w+\.|\$)\s*,\s*\.METRE\.\s*\)/i.exec(
      text,
    ) ?? /SI_UNIT\s*\(\s*(\.\w+\.|\$)\s*,\s*\.METRE\.\s*\)/i.exec(text);
  if (
    conversion &&
    /LENGTH_UNIT/i.test(text.slice(Math.max(0, conversion.index - 200), conversion.index + 400))
  ) {
    units = CONVERSION_UNITS[conversion[1].toUpperCase()] ?? conversion[1].toLowerCase();
  } else if (si) {
    const prefix = si[1] === '$' ? null : si[1].replace(/\./g, '').toUpperCase();
    units = prefix ? (PREFIXES[prefix] ?? `${prefix.toLowerCase()}m`) : 'm';
  }
  const count = (pattern: RegExp) => text.match(pattern)?.length ?? 0;
  return {
    software: software || null,
    schema,
    units,
    products: count(/=\s*PRODUCT\s*\(/gi),
    assemblyUsages: count(/=\s*NEXT_ASSEMBLY_USAGE_OCCURRENCE\s*\(/gi),
    author,
  };
}
