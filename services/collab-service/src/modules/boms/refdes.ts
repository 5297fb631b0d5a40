import { MAX_REFDES, MAX_REFDES_TEXT } from '@hwp/contracts';

/** A designator: letters, then a number (`R1`, `C12`, `U3`, `TP10`); an optional `_` or `.` suffix part (`U3.1`). */
const DESIGNATOR = /^([A-Za-z]{1,16})(\d{1,9})([._][A-Za-z0-9]{1,8})?$/;
const RANGE = /^([A-Za-z]{1,16})(\d{1,9})-([A-Za-z]{1,16})?(\d{1,9})$/;

export class RefdesError extends Error {}

/**
 * The entries of a designator text or list (`R1, R3 - R5; C1` -> `R1`, `R3-R5`, `C1`), at most
 * MAX_REFDES_TEXT characters in all. The lookbehind starts a dash's spaces only where a run of
 * spaces starts: without it a long run not followed by a dash is retried from each of its spaces
 * (quadratic: 150,000 spaces took 19 s).
 */
function entriesOf(input: string | string[]): string[] {
  const texts = Array.isArray(input) ? input : [input];
  let length = 0;
  for (const text of texts) {
    if (typeof text !== 'string') throw new RefdesError('reference designators must be text');
    length += text.length;
  }
  if (length > MAX_REFDES_TEXT)
    throw new RefdesError(`reference designators longer than ${MAX_REFDES_TEXT} characters`);
  return texts
    .flatMap((text) => text.replace(/(?<!\s)\s*[-–]\s*/g, '-').split(/[,;\s]+/))
    .filter((entry) => entry.length > 0);
}

/** A range entry's prefix and bounds (checked), or null for a single designator. */
function rangeOf(entry: string): { prefix: string; start: number; end: number } | null {
  const range = RANGE.exec(entry);
  if (!range) {
    if (!DESIGNATOR.test(entry))
      throw new RefdesError(`${entry} is not a reference designator (like R1 or C3-C5)`);
    return null;
  }
  const [, prefix, from, toPrefix, to] = range;
  if (toPrefix && toPrefix.toUpperCase() !== prefix.toUpperCase())
    throw new RefdesError(`${entry}: a range keeps one prefix`);
  const start = Number(from);
  const end = Number(to);
  if (end < start) throw new RefdesError(`${entry}: the range runs backwards`);
  if (end - start >= MAX_REFDES) throw new RefdesError(`${entry}: more than ${MAX_REFDES} designators`);
  return { prefix, start, end };
}

/**
 * How many designators a text or list expands to, without expanding it (a range counts its size):
 * what a request or a file is charged before any expansion. Malformed or over MAX_REFDES: RefdesError.
 */
export function countRefdes(input: string | string[] | undefined | null): number {
  if (input === undefined || input === null) return 0;
  let count = 0;
  for (const entry of entriesOf(input)) {
    const range = rangeOf(entry);
    count += range ? range.end - range.start + 1 : 1;
    if (count > MAX_REFDES) throw new RefdesError(`more than ${MAX_REFDES} reference designators`);
  }
  return count;
}

/**
 * Reference designators from text (`R1, R3-R5; C1`) or a list: each entry a designator or a range of
 * one prefix (`R3-R5` or `R3-5`) expanded in order. Upper-cased, duplicates refused, at most MAX_REFDES
 * (counted before anything is expanded).
 */
export function expandRefdes(input: string | string[] | undefined | null): string[] {
  if (input === undefined || input === null) return [];
  countRefdes(input);
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (designator: string) => {
    const upper = designator.toUpperCase();
    if (seen.has(upper)) throw new RefdesError(`${upper} is listed twice`);
    seen.add(upper);
    out.push(upper);
  };
  for (const entry of entriesOf(input)) {
    const range = rangeOf(entry);
    if (range) for (let n = range.start; n <= range.end; n++) add(`${range.prefix}${n}`);
    else add(entry);
  }
  return out;
}

/** Designators compacted for a cell: consecutive numbers of one prefix become a range (`R1-R4,C1`). */
export function compactRefdes(designators: readonly string[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < designators.length) {
    const match = /^([A-Z]+)(\d+)$/.exec(designators[i]);
    if (!match) {
      parts.push(designators[i++]);
      continue;
    }
    let j = i;
    while (j + 1 < designators.length) {
      const next = /^([A-Z]+)(\d+)$/.exec(designators[j + 1]);
      if (
        !next ||
        next[1] !== match[1] ||
        Number(next[2]) !== Number(match[2]) + (j + 1 - i) ||
        next[2].startsWith('0')
      )
        break;
      j++;
    }
    parts.push(j - i >= 2 ? `${designators[i]}-${designators[j]}` : designators.slice(i, j + 1).join(','));
    i = j + 1;
  }
  return parts.join(',');
}
