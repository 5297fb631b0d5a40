import type { Effectivity, EffectivityOverlap } from '@hwp/contracts';

/** The stored effectivity of a line (open ends are null). */
export interface EffectivityRanges {
  dateFrom?: string | null;
  dateTo?: string | null;
  serialFrom?: number | null;
  serialTo?: number | null;
  lotFrom?: string | null;
  lotTo?: string | null;
}

type Bound = string | number | null | undefined;
interface Range {
  name: 'date' | 'serial' | 'lot';
  from: Bound;
  to: Bound;
}

const isSet = (value: Bound) => value !== null && value !== undefined;

function rangesOf(e: EffectivityRanges): Range[] {
  return [
    { name: 'date', from: e.dateFrom, to: e.dateTo },
    { name: 'serial', from: e.serialFrom, to: e.serialTo },
    { name: 'lot', from: e.lotFrom, to: e.lotTo },
  ];
}

/** A range that ends before it starts, as `{ field, message }`; null when all are in order. */
export function checkEffectivity(e: EffectivityRanges): { field: string; message: string } | null {
  for (const range of rangesOf(e)) {
    if (
      isSet(range.from) &&
      isSet(range.to) &&
      (range.from as string | number) > (range.to as string | number)
    ) {
      return { field: `${range.name}To`, message: `ends before ${range.name}From` };
    }
  }
  if (e.dateFrom && Number.isNaN(Date.parse(e.dateFrom)))
    return { field: 'dateFrom', message: 'is not a date' };
  if (e.dateTo && Number.isNaN(Date.parse(e.dateTo))) return { field: 'dateTo', message: 'is not a date' };
  return null;
}

/** Closed ranges, open ends unbounded: whether [a.from, a.to] and [b.from, b.to] share a value. */
function intersects(a: Range, b: Range): boolean {
  const startsBeforeOtherEnds = (from: Bound, to: Bound) =>
    !isSet(from) || !isSet(to) || (from as string) <= (to as string);
  return startsBeforeOtherEnds(a.from, b.to) && startsBeforeOtherEnds(b.from, a.to);
}

/**
 * Where two lines both apply: null when some dimension (date, serial, lot) keeps them apart,
 * else the dimensions constrained on either side (none: both apply always).
 */
export function overlapOf(a: EffectivityRanges, b: EffectivityRanges): string[] | null {
  const left = rangesOf(a);
  const right = rangesOf(b);
  const constrained: string[] = [];
  for (let i = 0; i < left.length; i++) {
    if (!intersects(left[i], right[i])) return null;
    if (isSet(left[i].from) || isSet(left[i].to) || isSet(right[i].from) || isSet(right[i].to))
      constrained.push(left[i].name);
  }
  return constrained;
}

/** A line compared by `validate`. */
export interface EffectivityLine extends EffectivityRanges {
  id: string;
  partNumber: string;
  refdes: string[];
}

/** The overlaps of `effectivity` with `others` (lines of the same part, or sharing a designator, under one parent). */
export function findOverlaps(effectivity: Effectivity, others: EffectivityLine[]): EffectivityOverlap[] {
  const overlaps: EffectivityOverlap[] = [];
  for (const other of others) {
    const dimensions = overlapOf(effectivity, other);
    if (!dimensions) continue;
    const where =
      dimensions.length > 0 ? `overlapping ${dimensions.join(', ')} ranges` : 'no effectivity limits';
    overlaps.push({
      itemId: other.id,
      partNumber: other.partNumber,
      refdes: other.refdes,
      dimensions,
      dateFrom: other.dateFrom ?? null,
      dateTo: other.dateTo ?? null,
      serialFrom: other.serialFrom ?? null,
      serialTo: other.serialTo ?? null,
      lotFrom: other.lotFrom ?? null,
      lotTo: other.lotTo ?? null,
      message: `Line ${other.id} (${other.partNumber}${other.refdes.length ? ` ${other.refdes.join(',')}` : ''}) applies too: ${where}`,
    });
  }
  return overlaps;
}
