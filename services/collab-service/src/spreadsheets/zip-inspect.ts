import { createInflateRaw } from 'node:zlib';

/**
 * A small, bounds-checked reader of a ZIP's central directory, run before the XLSX library sees
 * the file. xlsx 0.18.5 inflates every entry of an XLSX (a ZIP) in memory, trusting the sizes in
 * the file, so a zip bomb (kilobytes compressed, gigabytes inflated) would exhaust the process.
 *
 * It walks the archive exactly as xlsx's embedded reader (cfb 1.2) does: the last end-of-central-
 * directory record, then `entry count` central records, each pointing at a local header whose
 * method and data offset xlsx uses. Whatever it accepts, xlsx reads the same way.
 *
 * No imports from the workspace packages: the parse worker loads this file too.
 */

/** Why an archive was refused: `too_large` becomes 413, `invalid` 400, `not_xlsx` 415. */
export type ZipRejectionReason = 'too_large' | 'invalid' | 'not_xlsx';

export class ZipRejection extends Error {
  constructor(
    readonly reason: ZipRejectionReason,
    message: string,
  ) {
    super(message);
    this.name = 'ZipRejection';
  }
}

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated (the only methods xlsx reads). */
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Offset of the entry's data, after its local header. */
  dataStart: number;
}

export interface ZipLimits {
  /** Sum of the declared uncompressed sizes of all entries. */
  maxUncompressedBytes: number;
  /** Uncompressed / compressed size of one entry, checked for entries above `ratioFloorBytes`. */
  maxCompressionRatio: number;
  ratioFloorBytes: number;
  maxEntries: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxUncompressedBytes: 256 * 1024 * 1024,
  // Spreadsheet XML deflates 5-30x; zeros or one repeated row deflate about 1000x.
  maxCompressionRatio: 100,
  ratioFloorBytes: 1024 * 1024,
  maxEntries: 10_000,
};

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_SIZE = 22;
const CENTRAL_SIZE = 46;
const LOCAL_SIZE = 30;
const MAX_COMMENT = 0xffff;
/** Traditional encryption, strong encryption, encrypted central directory. */
const ENCRYPTED_FLAGS = 0x0001 | 0x0040 | 0x2000;
const DATA_DESCRIPTOR_FLAG = 0x0008;
const ZIP64_MARK = 0xffffffff;

const MB = 1024 * 1024;

/** Checks the archive's structure and declared sizes; throws {@link ZipRejection}. */
export function inspectZip(buf: Uint8Array, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipEntry[] {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const u16 = (at: number) => view.getUint16(at, true);
  const u32 = (at: number) => view.getUint32(at, true);
  const invalid = (why: string) =>
    new ZipRejection('invalid', `The XLSX file is not a valid ZIP archive (${why})`);

  // xlsx takes the LAST signature in the file, so this does too, and refuses one that is cut short.
  let eocd = -1;
  const lowest = Math.max(0, buf.length - EOCD_SIZE - MAX_COMMENT);
  for (let at = buf.length - 4; at >= lowest; at--) {
    if (u32(at) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw invalid('no end of central directory');
  if (eocd + EOCD_SIZE > buf.length) throw invalid('truncated end of central directory');
  const count = u16(eocd + 8);
  const directoryOffset = u32(eocd + 16);
  if (u16(eocd + 4) !== 0 || u16(eocd + 6) !== 0 || count !== u16(eocd + 10))
    throw invalid('multi-disk archive');
  if (count === 0xffff || directoryOffset === ZIP64_MARK) throw invalid('ZIP64 is not supported');
  if (count > limits.maxEntries) {
    throw new ZipRejection('too_large', `The XLSX file has ${count} entries (at most ${limits.maxEntries})`);
  }

  const entries: ZipEntry[] = [];
  let total = 0;
  let cursor = directoryOffset;
  for (let i = 0; i < count; i++) {
    if (cursor + CENTRAL_SIZE > eocd || u32(cursor) !== CENTRAL_SIGNATURE)
      throw invalid('bad central directory');
    const flags = u16(cursor + 8);
    const method = u16(cursor + 10);
    const compressedSize = u32(cursor + 20);
    const uncompressedSize = u32(cursor + 24);
    const nameLength = u16(cursor + 28);
    const localOffset = u32(cursor + 42);
    const nameEnd = cursor + CENTRAL_SIZE + nameLength;
    if (nameEnd > eocd) throw invalid('bad central directory');
    const name = Buffer.from(buf.buffer, buf.byteOffset + cursor + CENTRAL_SIZE, nameLength).toString(
      'latin1',
    );
    cursor = nameEnd + u16(cursor + 30) + u16(cursor + 32);

    if (flags & ENCRYPTED_FLAGS) throw invalid('encrypted entries');
    if (compressedSize === ZIP64_MARK || uncompressedSize === ZIP64_MARK)
      throw invalid('ZIP64 is not supported');
    if (method !== 0 && method !== 8) throw invalid(`compression method ${method}`);

    if (localOffset + LOCAL_SIZE > buf.length || u32(localOffset) !== LOCAL_SIGNATURE) {
      throw invalid(`bad local header for ${name}`);
    }
    const localFlags = u16(localOffset + 6);
    const localCompressed = u32(localOffset + 18);
    const localUncompressed = u32(localOffset + 22);
    const dataStart = localOffset + LOCAL_SIZE + u16(localOffset + 26) + u16(localOffset + 28);
    if (localFlags & ENCRYPTED_FLAGS) throw invalid('encrypted entries');
    if (u16(localOffset + 8) !== method) throw invalid(`local and central headers disagree for ${name}`);
    // xlsx sizes its output buffer from the local header; with a data descriptor (flag 8) it may be 0.
    const sizesMayBeDeferred = (localFlags & DATA_DESCRIPTOR_FLAG) !== 0;
    const localSizesMatch = localCompressed === compressedSize && localUncompressed === uncompressedSize;
    const localSizesDeferred = localCompressed === 0 && localUncompressed === 0;
    if (!localSizesMatch && !(sizesMayBeDeferred && localSizesDeferred)) {
      throw invalid(`local and central headers disagree for ${name}`);
    }
    if (dataStart + compressedSize > buf.length) throw invalid(`entry ${name} runs past the end of the file`);
    if (method === 0 && compressedSize !== uncompressedSize)
      throw invalid(`stored entry ${name} has two sizes`);

    total += uncompressedSize;
    if (total > limits.maxUncompressedBytes) {
      throw new ZipRejection(
        'too_large',
        `The XLSX file inflates to more than ${Math.round(limits.maxUncompressedBytes / MB)} MB`,
      );
    }
    const ratio = uncompressedSize / Math.max(compressedSize, 1);
    if (uncompressedSize > limits.ratioFloorBytes && ratio > limits.maxCompressionRatio) {
      throw new ZipRejection(
        'too_large',
        `The XLSX entry ${name} is compressed ${Math.round(ratio)}:1 (at most ${limits.maxCompressionRatio}:1); ` +
          'it looks like a zip bomb',
      );
    }
    entries.push({ name, method, compressedSize, uncompressedSize, dataStart });
  }

  const names = new Set(entries.map((entry) => entry.name.toLowerCase()));
  if (!names.has('[content_types].xml') || !names.has('xl/workbook.xml')) {
    throw new ZipRejection('not_xlsx', 'The file is a ZIP archive but not an XLSX workbook');
  }
  return entries;
}

/**
 * Inflates every deflated entry with a byte counter and no output kept, and refuses an entry
 * whose real size differs from its declared one: the declared sizes checked by `inspectZip` can
 * lie, and xlsx would inflate the real stream. Run it in the worker (it costs one inflate pass).
 */
export async function verifyZipEntries(buf: Uint8Array, entries: readonly ZipEntry[]): Promise<void> {
  for (const entry of entries) {
    if (entry.method !== 8) continue;
    const data = buf.subarray(entry.dataStart, entry.dataStart + entry.compressedSize);
    const inflated = await inflatedSize(data, entry.uncompressedSize);
    if (inflated === 'over') {
      throw new ZipRejection(
        'too_large',
        `The XLSX entry ${entry.name} inflates beyond its declared ${entry.uncompressedSize} bytes; ` +
          'it looks like a zip bomb',
      );
    }
    if (inflated === 'corrupt' || inflated !== entry.uncompressedSize) {
      throw new ZipRejection(
        'invalid',
        `The XLSX file is not a valid ZIP archive (entry ${entry.name} is corrupt)`,
      );
    }
  }
}

/** The inflated size of a raw deflate stream, stopping as soon as it passes `limit`. */
function inflatedSize(data: Uint8Array, limit: number): Promise<number | 'over' | 'corrupt'> {
  return new Promise((resolve) => {
    const inflate = createInflateRaw();
    let size = 0;
    let done = false;
    const finish = (result: number | 'over' | 'corrupt') => {
      if (done) return;
      done = true;
      inflate.destroy();
      resolve(result);
    };
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish('over');
    });
    inflate.on('error', () => finish('corrupt'));
    inflate.on('end', () => finish(size));
    inflate.end(data);
  });
}
