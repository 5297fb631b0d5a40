import { type ByteRange, type CompletedPart, InvalidBlobKeyError } from './blob-store';

/** S3's own limit; applying it to the filesystem driver too keeps keys portable between drivers. */
const MAX_KEY_BYTES = 1024;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what we reject
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * The same rules for both drivers, so a key accepted by S3 in production is accepted by the
 * filesystem driver in development and the other way round.
 */
export function assertValidBlobKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new InvalidBlobKeyError(String(key));
  }
  if (key.startsWith('/') || key.includes('\\') || CONTROL_CHARACTERS.test(key)) {
    throw new InvalidBlobKeyError(key);
  }
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw new InvalidBlobKeyError(key);
  }
}

/** A malformed range is a caller bug, not a property of the object, hence RangeError rather than 416. */
export function assertValidRange(range: ByteRange): void {
  if (!Number.isSafeInteger(range.start) || range.start < 0) {
    throw new RangeError(`invalid range start: ${range.start}`);
  }
  if (range.end !== undefined && (!Number.isSafeInteger(range.end) || range.end < range.start)) {
    throw new RangeError(`invalid range end: ${range.end}`);
  }
}

/** S3 lower-cases user metadata names; doing it on every driver makes head() results identical. */
export function normalizeMetadata(metadata: Record<string, string> | undefined): Record<string, string> {
  const normalized: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata ?? {})) normalized[name.toLowerCase()] = String(value);
  return normalized;
}

/** Callers may list parts in any order; both backends need them ascending and unique. */
export function sortCompletedParts(parts: CompletedPart[]): CompletedPart[] {
  if (parts.length === 0) throw new RangeError('a multipart upload needs at least one part');
  const sorted = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  sorted.forEach((part, index) => {
    assertValidPartNumber(part.partNumber);
    if (index > 0 && sorted[index - 1].partNumber === part.partNumber) {
      throw new RangeError(`part ${part.partNumber} listed twice`);
    }
  });
  return sorted;
}

export function assertValidPartNumber(partNumber: number): void {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) {
    throw new RangeError(`invalid part number: ${partNumber}`);
  }
}

/** ETags travel quoted in HTTP headers; compare them without the quotes (S3 does the same). */
export function unquoteEtag(etag: string): string {
  return etag.replace(/"/g, '').replace(/^W\//, '');
}
