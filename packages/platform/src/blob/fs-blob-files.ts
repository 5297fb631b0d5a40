// Files under an FsBlobStore root: atomic writes, sidecars, and the error codes that mean "missing".
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { type FileHandle, mkdir, open, readFile, rename, rm, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { normalizeMetadata } from './blob-validation';
import { HashingStream } from './hashing-stream';

/** What the sidecar JSON next to each object holds. */
export interface Sidecar {
  contentType: string;
  sha256: string;
  size: number;
  /**
   * Inode of the data file the sidecar was written for. Data and sidecar are renamed into place one after
   * the other, so a crash or a concurrent reader can see a new file with an old sidecar; the inode check
   * turns that into "no sidecar" instead of a wrong sha256.
   */
  ino: number;
  metadata: Record<string, string>;
}

export interface WrittenFile {
  size: number;
  sha256: string;
  ino: number;
}

export const SIDECAR_SUFFIX = '.meta.json';
/** A concurrent delete may prune the folder we just created; recreating it a few times always wins. */
export const MAX_CREATE_ATTEMPTS = 5;

export async function readSidecar(file: string, stats: Stats): Promise<Sidecar | undefined> {
  let sidecar: Sidecar;
  try {
    sidecar = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    if (isMissing(error) || error instanceof SyntaxError) return undefined;
    throw error;
  }
  return sidecar.ino === stats.ino && sidecar.size === stats.size ? sidecar : undefined;
}

export async function writeSidecar(
  file: string,
  written: WrittenFile,
  contentType: string,
  metadata: Record<string, string> | undefined,
): Promise<void> {
  const sidecar: Sidecar = {
    contentType,
    sha256: written.sha256,
    size: written.size,
    ino: written.ino,
    metadata: normalizeMetadata(metadata),
  };
  await writeAtomically(file, Readable.from([Buffer.from(JSON.stringify(sidecar))]), true);
}

/** Bytes a file being written may have queued behind the write in progress. */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/**
 * Streams into a temp file in the target's folder and renames it over the target, so readers see either
 * the old or the new content, never a partial file.
 */
export async function writeAtomically(
  target: string,
  source: Readable | AsyncIterable<Buffer>,
  createParents: boolean,
): Promise<WrittenFile> {
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  const handle = await openExclusive(temp, createParents);
  const hasher = new HashingStream();
  try {
    const { ino } = await handle.stat();
    // Up to 1 MB may wait while a write runs: the waiting chunks go out in one writev and the source
    // keeps flowing (with the 16 KB default every 64 KB socket read waited for its own write: a 200
    // MB upload through HTTP ran at two thirds of the speed).
    await pipeline(source, hasher, handle.createWriteStream({ highWaterMark: WRITE_BUFFER_BYTES }));
    await rename(temp, target);
    return { size: hasher.bytesHashed, sha256: hasher.sha256, ino };
  } catch (error) {
    if (source instanceof Readable) source.destroy();
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
}

export async function openExclusive(file: string, createParents: boolean): Promise<FileHandle> {
  for (let attempt = 1; ; attempt++) {
    if (createParents) await mkdir(path.dirname(file), { recursive: true });
    try {
      return await open(file, 'wx');
    } catch (error) {
      if (!createParents || errorCode(error) !== 'ENOENT' || attempt >= MAX_CREATE_ATTEMPTS) throw error;
    }
  }
}

export async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    // EISDIR: the key names a folder of other keys, which is not an object, so there is nothing to delete.
    if (!isMissing(error) && errorCode(error) !== 'EISDIR') throw error;
  }
}

export async function pruneEmptyParents(file: string, stopDir: string): Promise<void> {
  for (let dir = path.dirname(file); dir.startsWith(`${stopDir}${path.sep}`); dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      return;
    }
  }
}

export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}

/** ENOTDIR: a key whose prefix is an object (`a` exists, asked for `a/b`) is just as missing. */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}
