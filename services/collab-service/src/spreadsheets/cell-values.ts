/**
 * Pure converters for import cell text. Each takes the cell's string as `parseSpreadsheet` returns
 * it and gives a value, `undefined` for a blank cell (the column is left as it is), or a message
 * the caller reports as a row error.
 */

export type CellResult<T> = { ok: true; value: T | undefined } | { ok: false; message: string };

const blank = <T>(): CellResult<T> => ({ ok: true, value: undefined });
const fail = <T>(message: string): CellResult<T> => ({ ok: false, message });

/** Tags: comma or pipe separated, trimmed, empty ones dropped, duplicates dropped (first spelling kept). */
export function splitTags(value: string): string[] {
  const tags: string[] = [];
  for (const raw of value.split(/[,|]/)) {
    const tag = raw.trim();
    if (tag !== '' && !tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

const MAX_JSON_CHARS = 64 * 1024;
const MAX_JSON_DEPTH = 32;

/**
 * The attributes column: a JSON object (`{"material":"PA66"}`). Arrays, scalars, invalid JSON, more
 * than 64 KB, nesting deeper than 32 and `__proto__` keys (they turn into prototype changes when the
 * object is later spread or assigned) are errors.
 */
export function parseJsonObject(value: string): CellResult<Record<string, unknown>> {
  const text = value.trim();
  if (text === '') return blank();
  if (text.length > MAX_JSON_CHARS)
    return fail(`Attributes must be at most ${MAX_JSON_CHARS / 1024} KB of JSON`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail('Attributes must be a JSON object, e.g. {"material":"PA66"}; this is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return fail('Attributes must be a JSON object, e.g. {"material":"PA66"}');
  }
  const problem = unsafeStructure(parsed, 1);
  return problem ? fail(problem) : { ok: true, value: parsed as Record<string, unknown> };
}

const NUL_IN_JSON = 'Attributes may not contain the NUL character (\\u0000), which the database cannot store';

function unsafeStructure(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? NUL_IN_JSON : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (Object.keys(value).some((key) => key.includes('\0'))) return NUL_IN_JSON;
  if (depth > MAX_JSON_DEPTH) return `Attributes may nest at most ${MAX_JSON_DEPTH} levels deep`;
  if (!Array.isArray(value) && Object.hasOwn(value, '__proto__'))
    return 'Attributes may not use the key "__proto__"';
  for (const child of Object.values(value)) {
    const problem = unsafeStructure(child, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

const TRUE_WORDS = new Set(['true', 'yes', 'y', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0']);

/** true/false, yes/no, y/n, 1/0, any case. */
export function parseBoolean(value: string): CellResult<boolean> {
  const word = value.trim().toLowerCase();
  if (word === '') return blank();
  if (TRUE_WORDS.has(word)) return { ok: true, value: true };
  if (FALSE_WORDS.has(word)) return { ok: true, value: false };
  return fail('Expected true or false (also yes/no, y/n, 1/0)');
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
const MAX_EXPONENT = 20;

/**
 * A decimal with a dot separator, returned as exact canonical text for a numeric column
 * (`+012.50` -> `12.50`, `.5` -> `0.5`, `1.2e3` -> `1200`). A comma is refused, never guessed:
 * `1,5` is 1.5 in much of Europe and `1,500` is 1500 in the US, and a wrong guess silently
 * scales a cost by 1000. Currency symbols and spaces inside the number are refused too.
 */
export function parseDecimal(value: string, separator: 'dot' | 'comma' = 'dot'): CellResult<string> {
  let text = value.trim();
  if (text === '') return blank();
  if (separator === 'comma') {
    // The file's convention was stated (decimal=comma): `1234,5`; a dot is then a thousands separator
    // or a mistake, and refused for the same reason a comma is in the default.
    if (text.includes('.'))
      return fail(
        'With decimal=comma, use a comma as the decimal separator and no thousands separators (1234,5)',
      );
    text = text.replace(',', '.');
    if (text.includes(',')) return fail('Expected a number such as 12,5');
  } else if (text.includes(',')) {
    return fail(
      'Use a dot as the decimal separator and no thousands separators (1234.5), or send decimal=comma',
    );
  }
  const match = DECIMAL.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return fail('Expected a number such as 12.5');
  const [, sign, whole, fraction = '', exponentText] = match;
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  if (Math.abs(exponent) > MAX_EXPONENT) return fail('The number is out of range');

  // Move the decimal point by the exponent, on the digits as text (exact, no float rounding).
  let digits = whole + fraction;
  let point = whole.length + exponent;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  } else if (point > digits.length) {
    digits += '0'.repeat(point - digits.length);
  }
  const integer = digits.slice(0, point).replace(/^0+(?=\d)/, '') || '0';
  const decimals = digits.slice(point);
  const canonical = decimals === '' ? integer : `${integer}.${decimals}`;
  const isZero = /^[0.]*$/.test(canonical);
  return { ok: true, value: sign === '-' && !isZero ? `-${canonical}` : canonical };
}
