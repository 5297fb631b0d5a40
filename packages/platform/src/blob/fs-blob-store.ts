import { randomBytes } from 'node:crypto';
import { close, createReadStream, open as fsOpen, fstatSync, read, type Stats } from 'node:fs';
import { mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { finished, Readable } from 'node:stream';
import {
  type BlobHead,
  BlobNotFoundError,
  type BlobStore,
  type ByteRange,
  type CompletedPart,
  DEFAULT_CONTENT_TYPE,
  type GetResult,
  type MultipartUpload,
  type PresignOptions,
  type PutOptions,
  type PutResult,
  RangeNotSatisfiableError,
  type ReadOptions,
} from './blob-store';
import {
  assertValidBlobKey,
  assertValidPartNumber,
  assertValidRange,
  sortCompletedParts,
} from './blob-validation';
import {
  isMissing,
  pruneEmptyParents,
  readSidecar,
  SIDECAR_SUFFIX,
  type Sidecar,
  unlinkIfPresent,
  type WrittenFile,
  writeAtomically,
  writeSidecar,
} from './fs-blob-files';
import { FsMultipartStaging } from './fs-blob-multipart';
import {
  type FsPresignedCheck,
  presignFsUrl,
  type SignedFields,
  verifyFsPresignedUrl,
} from './fs-presigned-url';
import { OpenFiles } from './open-files';

export {
  type FsPresignedCheck,
  type VerifyFsPresignedUrlOptions,
  verifyFsPresignedUrl,
} from './fs-presigned-url';

export interface FsBlobStoreOptions {
  /** Folder holding everything; created on first write. */
  root: string;
  /** Public URL where createFsPresignedHandler is mounted, e.g. `http://localhost:3000/blobs`. Needed to presign. */
  publicBaseUrl?: string;
  /** HMAC-SHA256 key for presigned URLs. */
  signingKey: string;
}

function closeFd(fd: number): Promise<void> {
  return new Promise((resolve) => close(fd, () => resolve()));
}

/** The bytes of an open file (all, or `start`..`end` inclusive); the stream closes `fd` when it ends or fails. */
function streamOf(fd: number, start?: number, end?: number): Readable {
  return createReadStream('', { fd, start, end, autoClose: true });
}

/** The file system calls of a stream over a kept descriptor: reads, and a close that keeps it open. */
const KEPT_FD = { read, close: (_fd: number, done: (error: null) => void) => done(null) };

/** Blob store over a local folder, for development, tests and single-node installs. */
export class FsBlobStore implements BlobStore {
  readonly driver = 'fs' as const;
  readonly root: string;
  /**
   * Objects, sidecars and multipart staging live in three separate trees so that every key stays usable:
   * a sidecar next to the object would make keys ending in `.meta.json` collide with it.
   */
  private readonly objectsDir: string;
  private readonly metaDir: string;
  private readonly multipart: FsMultipartStaging;
  private readonly publicBaseUrl?: string;
  private readonly signingKey: string;
  /** Descriptors of immutable objects kept open between reads. */
  private readonly openFiles = new OpenFiles();

  constructor(options: FsBlobStoreOptions) {
    if (!options.signingKey) throw new Error('FsBlobStore needs a signingKey');
    this.root = path.resolve(options.root);
    this.objectsDir = path.join(this.root, 'objects');
    this.metaDir = path.join(this.root, 'meta');
    this.multipart = new FsMultipartStaging(path.join(this.root, 'multipart'));
    this.publicBaseUrl = options.publicBaseUrl?.replace(/\/+$/, '');
    this.signingKey = options.signingKey;
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<PutResult> {
    assertValidBlobKey(key);
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    const written = await writeAtomically(this.objectPath(key), source, true);
    this.openFiles.drop(key);
    await this.writeSidecar(key, written, options.contentType ?? DEFAULT_CONTENT_TYPE, options.metadata);
    return { key, size: written.size, sha256: written.sha256 };
  }

  get(key: string, range?: ByteRange): Promise<GetResult> {
    return this.open(key, range, true);
  }

  read(key: string, range?: ByteRange, options: ReadOptions = {}): Promise<GetResult> {
    return options.immutable ? this.readKept(key, range) : this.open(key, range, false);
  }

  /** `read` through a descriptor kept open between reads (an immutable key). */
  private async readKept(key: string, range: ByteRange | undefined): Promise<GetResult> {
    assertValidBlobKey(key);
    if (range) assertValidRange(range);
    const file = await this.openFiles.acquire(key, () => this.openObject(key));
    try {
      const { size } = file.stats;
      const start = range?.start ?? 0;
      if (range && start >= size) throw new RangeNotSatisfiableError(key, size);
      if (size === 0) {
        file.release();
        return { body: Readable.from([]), size: 0, totalSize: 0, contentType: DEFAULT_CONTENT_TYPE };
      }
      const end = Math.min(range?.end ?? size - 1, size - 1);
      // The descriptor belongs to OpenFiles: the stream must not close it, not even when destroyed.
      const body = createReadStream('', { fd: file.fd, start, end, autoClose: false, fs: KEPT_FD });
      finished(body, () => file.release());
      const result: GetResult = {
        body,
        size: end - start + 1,
        totalSize: size,
        contentType: DEFAULT_CONTENT_TYPE,
      };
      if (range) result.range = { start, end };
      return result;
    } catch (error) {
      // Released once whatever failed (release is idempotent).
      file.release();
      throw error;
    }
  }

  private async open(key: string, range: ByteRange | undefined, withType: boolean): Promise<GetResult> {
    assertValidBlobKey(key);
    if (range) assertValidRange(range);
    const { fd, stats } = await this.openObject(key);
    try {
      // The sidecar is a second file to open and read: only when the caller wants the type.
      const sidecar = withType ? await this.readSidecar(key, stats) : undefined;
      const contentType = sidecar?.contentType ?? DEFAULT_CONTENT_TYPE;
      // Reading through the descriptor we statted keeps size and bytes consistent even if the key is replaced now.
      if (!range) {
        return { body: streamOf(fd), size: stats.size, totalSize: stats.size, contentType };
      }
      if (range.start >= stats.size) throw new RangeNotSatisfiableError(key, stats.size);
      const end = Math.min(range.end ?? stats.size - 1, stats.size - 1);
      return {
        body: streamOf(fd, range.start, end),
        size: end - range.start + 1,
        totalSize: stats.size,
        contentType,
        range: { start: range.start, end },
      };
    } catch (error) {
      await closeFd(fd);
      throw error;
    }
  }

  async head(key: string): Promise<BlobHead | null> {
    assertValidBlobKey(key);
    let stats: Stats;
    try {
      stats = await stat(this.objectPath(key));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    if (!stats.isFile()) return null;
    const sidecar = await this.readSidecar(key, stats);
    return {
      key,
      size: stats.size,
      contentType: sidecar?.contentType ?? DEFAULT_CONTENT_TYPE,
      sha256: sidecar?.sha256,
      metadata: sidecar?.metadata ?? {},
      // A fresh Date rather than stats.mtime, which belongs to Node's internal realm (instanceof fails in vm contexts).
      lastModified: new Date(stats.mtimeMs),
    };
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    const objectPath = this.objectPath(key);
    const sidecarPath = this.sidecarPath(key);
    await unlinkIfPresent(objectPath);
    this.openFiles.drop(key);
    await unlinkIfPresent(sidecarPath);
    // Empty folders left behind would stop a later put of a key equal to the folder's path.
    await pruneEmptyParents(objectPath, this.objectsDir);
    await pruneEmptyParents(sidecarPath, this.metaDir);
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    assertValidBlobKey(fromKey);
    assertValidBlobKey(toKey);
    const { fd, stats } = await this.openObject(fromKey);
    let sidecar: Sidecar | undefined;
    try {
      sidecar = await this.readSidecar(fromKey, stats);
    } catch (error) {
      await closeFd(fd);
      throw error;
    }
    // Streaming (rather than copyFile) rehashes the bytes, so the new sidecar is right even without a source one.
    const written = await writeAtomically(this.objectPath(toKey), streamOf(fd), true);
    this.openFiles.drop(toKey);
    await this.writeSidecar(toKey, written, sidecar?.contentType ?? DEFAULT_CONTENT_TYPE, sidecar?.metadata);
  }

  async presignGet(key: string, options: PresignOptions): Promise<string> {
    assertValidBlobKey(key);
    return this.presign({ method: 'GET', key }, options.expiresIn);
  }

  async presignPut(key: string, options: PresignOptions): Promise<string> {
    assertValidBlobKey(key);
    return this.presign({ method: 'PUT', key, contentType: options.contentType }, options.expiresIn);
  }

  async createMultipartUpload(key: string, options: PutOptions = {}): Promise<MultipartUpload> {
    assertValidBlobKey(key);
    return this.multipart.create(key, options);
  }

  async presignUploadPart(
    upload: MultipartUpload,
    partNumber: number,
    options: PresignOptions,
  ): Promise<string> {
    assertValidBlobKey(upload.key);
    this.multipart.uploadDir(upload.uploadId);
    return this.presign(
      {
        method: 'PUT',
        key: upload.key,
        uploadId: upload.uploadId,
        partNumber,
        ...(options.contentLength === undefined ? {} : { contentLength: options.contentLength }),
      },
      options.expiresIn,
    );
  }

  /** Stores one part of a multipart upload (what a presigned part URL does); returns its ETag (the part's sha256). */
  async writeUploadPart(
    upload: MultipartUpload,
    partNumber: number,
    body: Readable | Buffer,
  ): Promise<string> {
    assertValidPartNumber(partNumber);
    return this.multipart.writePart(upload, partNumber, body);
  }

  async completeMultipartUpload(upload: MultipartUpload, parts: CompletedPart[]): Promise<PutResult> {
    const sorted = sortCompletedParts(parts);
    const manifest = await this.multipart.readManifest(upload);
    const written = await writeAtomically(
      this.objectPath(upload.key),
      Readable.from(this.multipart.readParts(upload.uploadId, sorted)),
      true,
    );
    this.openFiles.drop(upload.key);
    await this.writeSidecar(upload.key, written, manifest.contentType, manifest.metadata);
    await this.multipart.remove(upload.uploadId);
    return { key: upload.key, size: written.size, sha256: written.sha256 };
  }

  /** Idempotent like delete(): aborting an unknown or finished upload is not an error. */
  async abortMultipartUpload(upload: MultipartUpload): Promise<void> {
    await this.multipart.abort(upload);
  }

  async abortMultipartUploadsStartedBefore(startedBefore: Date, prefix = ''): Promise<number> {
    return this.multipart.abortStartedBefore(startedBefore, prefix);
  }

  async ping(): Promise<void> {
    // access(W_OK) says nothing about full disks or read-only remounts; an actual write does.
    await mkdir(this.root, { recursive: true });
    const probe = path.join(this.root, `.ping-${randomBytes(6).toString('hex')}`);
    await writeFile(probe, '');
    await unlink(probe);
  }

  /** Nothing to release: every operation opens and closes its own files. */
  async close(): Promise<void> {}

  /** Checks a request URL (path and query) against this store's signing key and public base path. */
  verifyPresignedUrl(url: string | URL, method: string, now = Date.now()): FsPresignedCheck {
    return verifyFsPresignedUrl(url, method, {
      signingKey: this.signingKey,
      publicBaseUrl: this.publicBaseUrl,
      now,
    });
  }

  private presign(fields: Omit<SignedFields, 'expires'>, expiresIn: number): string {
    return presignFsUrl(this.publicBaseUrl, this.signingKey, fields, expiresIn);
  }

  private objectPath(key: string): string {
    return path.join(this.objectsDir, ...key.split('/'));
  }

  private sidecarPath(key: string): string {
    return `${path.join(this.metaDir, ...key.split('/'))}${SIDECAR_SUFFIX}`;
  }

  /**
   * The object's file descriptor and stats, with the callback API (a FileHandle reads each chunk
   * through a promise: measurably slower on the ranged reads serving makes). The caller owns `fd`:
   * a stream from `streamOf` closes it, else `closeFd`.
   */
  private async openObject(key: string): Promise<{ fd: number; stats: Stats }> {
    const objectPath = this.objectPath(key);
    let fd: number;
    try {
      fd = await new Promise<number>((resolve, reject) =>
        fsOpen(objectPath, 'r', (error, opened) => (error ? reject(error) : resolve(opened))),
      );
    } catch (error) {
      if (isMissing(error)) throw new BlobNotFoundError(key);
      throw error;
    }
    let stats: Stats;
    try {
      // Synchronous on purpose: fstat of an open descriptor reads the inode open() just loaded (no
      // I/O), and a trip through the thread pool costs more than the call.
      stats = fstatSync(fd);
    } catch (error) {
      await closeFd(fd);
      throw error;
    }
    // Folders exist only as key prefixes; opening one succeeds on Linux but it is not an object.
    if (!stats.isFile()) {
      await closeFd(fd);
      throw new BlobNotFoundError(key);
    }
    return { fd, stats };
  }

  private readSidecar(key: string, stats: Stats): Promise<Sidecar | undefined> {
    return readSidecar(this.sidecarPath(key), stats);
  }

  private writeSidecar(
    key: string,
    written: WrittenFile,
    contentType: string,
    metadata: Record<string, string> | undefined,
  ): Promise<void> {
    return writeSidecar(this.sidecarPath(key), written, contentType, metadata);
  }
}
