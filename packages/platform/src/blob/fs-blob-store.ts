import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, type Stats } from 'node:fs';
import {
  type FileHandle,
  mkdir,
  open,
  readFile,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
  writeFile,
} from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ErrorCode } from '@hwp/contracts';
import {
  type BlobHead,
  BlobNotFoundError,
  type BlobStore,
  type ByteRange,
  type CompletedPart,
  DEFAULT_CONTENT_TYPE,
  type GetResult,
  InvalidBlobKeyError,
  type MultipartUpload,
  MultipartUploadNotFoundError,
  type PresignOptions,
  type PutOptions,
  type PutResult,
  RangeNotSatisfiableError,
} from './blob-store';
import {
  assertValidBlobKey,
  assertValidPartNumber,
  assertValidRange,
  normalizeMetadata,
  sortCompletedParts,
  unquoteEtag,
} from './blob-validation';
import { HashingStream } from './hashing-stream';

export interface FsBlobStoreOptions {
  /** Folder holding everything; created on first write. */
  root: string;
  /** Public URL where createFsPresignedHandler is mounted, e.g. `http://localhost:3000/blobs`. Needed to presign. */
  publicBaseUrl?: string;
  /** HMAC-SHA256 key for presigned URLs. */
  signingKey: string;
}

/** What the sidecar JSON next to each object holds. */
interface Sidecar {
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

interface UploadManifest {
  key: string;
  contentType: string;
  metadata: Record<string, string>;
}

interface WrittenFile {
  size: number;
  sha256: string;
  ino: number;
}

const UPLOAD_ID = /^[0-9a-f]{32}$/;
const SIDECAR_SUFFIX = '.meta.json';
/** A concurrent delete may prune the folder we just created; recreating it a few times always wins. */
const MAX_CREATE_ATTEMPTS = 5;

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
  private readonly multipartDir: string;
  private readonly publicBaseUrl?: string;
  private readonly signingKey: string;

  constructor(options: FsBlobStoreOptions) {
    if (!options.signingKey) throw new Error('FsBlobStore needs a signingKey');
    this.root = path.resolve(options.root);
    this.objectsDir = path.join(this.root, 'objects');
    this.metaDir = path.join(this.root, 'meta');
    this.multipartDir = path.join(this.root, 'multipart');
    this.publicBaseUrl = options.publicBaseUrl?.replace(/\/+$/, '');
    this.signingKey = options.signingKey;
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<PutResult> {
    assertValidBlobKey(key);
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    const written = await this.writeAtomically(this.objectPath(key), source, true);
    await this.writeSidecar(key, written, options.contentType ?? DEFAULT_CONTENT_TYPE, options.metadata);
    return { key, size: written.size, sha256: written.sha256 };
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    assertValidBlobKey(key);
    if (range) assertValidRange(range);
    const { handle, stats } = await this.openObject(key);
    try {
      const sidecar = await this.readSidecar(key, stats);
      const contentType = sidecar?.contentType ?? DEFAULT_CONTENT_TYPE;
      // Reading through the handle we statted keeps size and bytes consistent even if the key is replaced now.
      if (!range) {
        return { body: handle.createReadStream(), size: stats.size, totalSize: stats.size, contentType };
      }
      if (range.start >= stats.size) throw new RangeNotSatisfiableError(key, stats.size);
      const end = Math.min(range.end ?? stats.size - 1, stats.size - 1);
      return {
        body: handle.createReadStream({ start: range.start, end }),
        size: end - range.start + 1,
        totalSize: stats.size,
        contentType,
        range: { start: range.start, end },
      };
    } catch (error) {
      await handle.close();
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
    await unlinkIfPresent(sidecarPath);
    // Empty folders left behind would stop a later put of a key equal to the folder's path.
    await pruneEmptyParents(objectPath, this.objectsDir);
    await pruneEmptyParents(sidecarPath, this.metaDir);
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    assertValidBlobKey(fromKey);
    assertValidBlobKey(toKey);
    const { handle, stats } = await this.openObject(fromKey);
    let sidecar: Sidecar | undefined;
    try {
      sidecar = await this.readSidecar(fromKey, stats);
    } catch (error) {
      await handle.close();
      throw error;
    }
    // Streaming (rather than copyFile) rehashes the bytes, so the new sidecar is right even without a source one.
    const written = await this.writeAtomically(this.objectPath(toKey), handle.createReadStream(), true);
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
    const uploadId = randomBytes(16).toString('hex');
    const dir = this.uploadDir(uploadId);
    await mkdir(dir, { recursive: true });
    const manifest: UploadManifest = {
      key,
      contentType: options.contentType ?? DEFAULT_CONTENT_TYPE,
      metadata: normalizeMetadata(options.metadata),
    };
    await writeFile(path.join(dir, 'upload.json'), JSON.stringify(manifest));
    return { uploadId, key };
  }

  async presignUploadPart(
    upload: MultipartUpload,
    partNumber: number,
    options: PresignOptions,
  ): Promise<string> {
    assertValidBlobKey(upload.key);
    assertValidPartNumber(partNumber);
    this.uploadDir(upload.uploadId);
    return this.presign(
      { method: 'PUT', key: upload.key, uploadId: upload.uploadId, partNumber },
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
    await this.readManifest(upload);
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    try {
      // No parent creation: if the upload was aborted meanwhile, the part must fail rather than revive it.
      const written = await this.writeAtomically(this.partPath(upload.uploadId, partNumber), source, false);
      return written.sha256;
    } catch (error) {
      if (isMissing(error)) throw new MultipartUploadNotFoundError(upload.uploadId);
      throw error;
    }
  }

  async completeMultipartUpload(upload: MultipartUpload, parts: CompletedPart[]): Promise<PutResult> {
    const sorted = sortCompletedParts(parts);
    const manifest = await this.readManifest(upload);
    const written = await this.writeAtomically(
      this.objectPath(upload.key),
      Readable.from(this.readParts(upload.uploadId, sorted)),
      true,
    );
    await this.writeSidecar(upload.key, written, manifest.contentType, manifest.metadata);
    await rm(this.uploadDir(upload.uploadId), { recursive: true, force: true });
    return { key: upload.key, size: written.size, sha256: written.sha256 };
  }

  /** Idempotent like delete(): aborting an unknown or finished upload is not an error. */
  async abortMultipartUpload(upload: MultipartUpload): Promise<void> {
    if (!UPLOAD_ID.test(upload.uploadId)) return;
    try {
      await this.readManifest(upload);
    } catch (error) {
      if (error instanceof MultipartUploadNotFoundError) return;
      throw error;
    }
    await rm(this.uploadDir(upload.uploadId), { recursive: true, force: true });
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
    if (!this.publicBaseUrl) throw new Error('FsBlobStore needs publicBaseUrl to presign URLs');
    if (!(expiresIn > 0)) throw new RangeError(`expiresIn must be positive, got ${expiresIn}`);
    const expires = Date.now() + Math.round(expiresIn * 1000);
    const url = new URL(`${this.publicBaseUrl}/${fields.key.split('/').map(encodeURIComponent).join('/')}`);
    if (fields.uploadId !== undefined) url.searchParams.set('uploadId', fields.uploadId);
    if (fields.partNumber !== undefined) url.searchParams.set('partNumber', String(fields.partNumber));
    if (fields.contentType !== undefined) url.searchParams.set('contentType', fields.contentType);
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('sig', signFields(this.signingKey, { ...fields, expires }));
    return url.toString();
  }

  private objectPath(key: string): string {
    return path.join(this.objectsDir, ...key.split('/'));
  }

  private sidecarPath(key: string): string {
    return `${path.join(this.metaDir, ...key.split('/'))}${SIDECAR_SUFFIX}`;
  }

  /** Throws for ids we could not have issued, which also keeps path separators out of the staging path. */
  private uploadDir(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new MultipartUploadNotFoundError(uploadId);
    return path.join(this.multipartDir, uploadId);
  }

  private partPath(uploadId: string, partNumber: number): string {
    return path.join(this.uploadDir(uploadId), `part-${String(partNumber).padStart(5, '0')}`);
  }

  private async readManifest(upload: MultipartUpload): Promise<UploadManifest> {
    let manifest: UploadManifest;
    try {
      manifest = JSON.parse(
        await readFile(path.join(this.uploadDir(upload.uploadId), 'upload.json'), 'utf8'),
      );
    } catch (error) {
      if (isMissing(error)) throw new MultipartUploadNotFoundError(upload.uploadId);
      throw error;
    }
    // An upload id only counts together with the key it was created for, as on S3.
    if (manifest.key !== upload.key) throw new MultipartUploadNotFoundError(upload.uploadId);
    return manifest;
  }

  /** Concatenates the parts in order, checking each against the ETag the client got for it. */
  private async *readParts(uploadId: string, parts: CompletedPart[]): AsyncGenerator<Buffer> {
    for (const part of parts) {
      const hash = createHash('sha256');
      const stream = createReadStream(this.partPath(uploadId, part.partNumber));
      try {
        for await (const chunk of stream) {
          hash.update(chunk);
          yield chunk;
        }
      } catch (error) {
        if (isMissing(error))
          throw new Error(`part ${part.partNumber} of upload ${uploadId} was never uploaded`);
        throw error;
      }
      if (hash.digest('hex') !== unquoteEtag(part.etag)) {
        throw new Error(`part ${part.partNumber} of upload ${uploadId} does not match ETag ${part.etag}`);
      }
    }
  }

  private async openObject(key: string): Promise<{ handle: FileHandle; stats: Stats }> {
    let handle: FileHandle;
    try {
      handle = await open(this.objectPath(key), 'r');
    } catch (error) {
      if (isMissing(error)) throw new BlobNotFoundError(key);
      throw error;
    }
    const stats = await handle.stat();
    // Folders exist only as key prefixes; opening one succeeds on Linux but it is not an object.
    if (!stats.isFile()) {
      await handle.close();
      throw new BlobNotFoundError(key);
    }
    return { handle, stats };
  }

  private async readSidecar(key: string, stats: Stats): Promise<Sidecar | undefined> {
    let sidecar: Sidecar;
    try {
      sidecar = JSON.parse(await readFile(this.sidecarPath(key), 'utf8'));
    } catch (error) {
      if (isMissing(error) || error instanceof SyntaxError) return undefined;
      throw error;
    }
    return sidecar.ino === stats.ino && sidecar.size === stats.size ? sidecar : undefined;
  }

  private async writeSidecar(
    key: string,
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
    await this.writeAtomically(
      this.sidecarPath(key),
      Readable.from([Buffer.from(JSON.stringify(sidecar))]),
      true,
    );
  }

  /**
   * Streams into a temp file in the target's folder and renames it over the target, so readers see either
   * the old or the new content, never a partial file.
   */
  private async writeAtomically(
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
      await pipeline(source, hasher, handle.createWriteStream());
      await rename(temp, target);
      return { size: hasher.bytesHashed, sha256: hasher.sha256, ino };
    } catch (error) {
      if (source instanceof Readable) source.destroy();
      await handle.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw error;
    }
  }
}

async function openExclusive(file: string, createParents: boolean): Promise<FileHandle> {
  for (let attempt = 1; ; attempt++) {
    if (createParents) await mkdir(path.dirname(file), { recursive: true });
    try {
      return await open(file, 'wx');
    } catch (error) {
      if (!createParents || errorCode(error) !== 'ENOENT' || attempt >= MAX_CREATE_ATTEMPTS) throw error;
    }
  }
}

async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    // EISDIR: the key names a folder of other keys, which is not an object, so there is nothing to delete.
    if (!isMissing(error) && errorCode(error) !== 'EISDIR') throw error;
  }
}

async function pruneEmptyParents(file: string, stopDir: string): Promise<void> {
  for (let dir = path.dirname(file); dir.startsWith(`${stopDir}${path.sep}`); dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      return;
    }
  }
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}

/** ENOTDIR: a key whose prefix is an object (`a` exists, asked for `a/b`) is just as missing. */
function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

// ---------------------------------------------------------------------------------------------------------
// Presigned URLs

interface SignedFields {
  method: 'GET' | 'PUT';
  key: string;
  /** Epoch milliseconds. */
  expires: number;
  uploadId?: string;
  partNumber?: number;
  /** Set when the URL was presigned for a content type; the PUT must send exactly this Content-Type. */
  contentType?: string;
}

export type FsPresignedCheck =
  | ({ ok: true } & SignedFields)
  | {
      ok: false;
      /** not-presigned: no signature parameters, or a path outside the base path; someone else's request. */
      reason: 'not-presigned' | 'malformed' | 'bad-signature' | 'expired';
    };

export interface VerifyFsPresignedUrlOptions {
  signingKey: string;
  /** Only its path matters: the host is not signed, so URLs keep working behind proxies. */
  publicBaseUrl?: string;
  now?: number;
}

function signFields(signingKey: string, fields: SignedFields): string {
  // Keys cannot contain control characters, so newline-joined fields cannot be confused with one another.
  const canonical = [
    fields.method,
    fields.key,
    String(fields.expires),
    fields.uploadId ?? '',
    fields.partNumber === undefined ? '' : String(fields.partNumber),
    fields.contentType ?? '',
  ].join('\n');
  return createHmac('sha256', signingKey).update(canonical).digest('hex');
}

/** Verifies a URL made by FsBlobStore's presign methods for a request with the given HTTP method. */
export function verifyFsPresignedUrl(
  url: string | URL,
  method: string,
  options: VerifyFsPresignedUrlOptions,
): FsPresignedCheck {
  const parsed = typeof url === 'string' ? new URL(url, 'http://presigned.invalid') : url;
  const basePath = options.publicBaseUrl ? new URL(options.publicBaseUrl).pathname.replace(/\/+$/, '') : '';
  const sig = parsed.searchParams.get('sig');
  const expiresText = parsed.searchParams.get('expires');
  if (sig === null || expiresText === null || !parsed.pathname.startsWith(`${basePath}/`)) {
    return { ok: false, reason: 'not-presigned' };
  }
  let key: string;
  try {
    key = parsed.pathname
      .slice(basePath.length + 1)
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .join('/');
    assertValidBlobKey(key);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const expires = Number(expiresText);
  const partNumberText = parsed.searchParams.get('partNumber');
  const partNumber = partNumberText === null ? undefined : Number(partNumberText);
  const uploadId = parsed.searchParams.get('uploadId') ?? undefined;
  if (!Number.isSafeInteger(expires) || (partNumber !== undefined && !Number.isInteger(partNumber))) {
    return { ok: false, reason: 'malformed' };
  }
  if ((uploadId === undefined) !== (partNumber === undefined)) return { ok: false, reason: 'malformed' };
  const upper = method.toUpperCase();
  const signedMethod = upper === 'HEAD' ? 'GET' : upper;
  if (signedMethod !== 'GET' && signedMethod !== 'PUT') return { ok: false, reason: 'bad-signature' };
  const fields: SignedFields = {
    method: signedMethod,
    key,
    expires,
    uploadId,
    partNumber,
    contentType: parsed.searchParams.get('contentType') ?? undefined,
  };
  const expected = Buffer.from(signFields(options.signingKey, fields), 'hex');
  const given = Buffer.from(sig, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad-signature' };
  }
  // Checked after the signature, so a tampered expiry reports as tampering.
  if ((options.now ?? Date.now()) > expires) return { ok: false, reason: 'expired' };
  return { ok: true, ...fields };
}

/** Resolves true when it answered the request, false when the request is not a presigned URL of this store. */
export type FsPresignedHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/**
 * Serves presigned URLs of an FsBlobStore: GET/HEAD (with single byte ranges), PUT of whole objects and
 * PUT of multipart parts. Mount it where publicBaseUrl points; it reads `req.originalUrl` when present
 * (express strips mount paths from `req.url`), else `req.url`.
 */
export function createFsPresignedHandler(store: FsBlobStore): FsPresignedHandler {
  return async (req, res) => {
    const rawUrl = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const method = (req.method ?? 'GET').toUpperCase();
    const check = store.verifyPresignedUrl(new URL(rawUrl, 'http://localhost'), method);
    if (!check.ok && check.reason === 'not-presigned') return false;
    try {
      if (method !== 'GET' && method !== 'HEAD' && method !== 'PUT') {
        res.setHeader('Allow', 'GET, HEAD, PUT');
        sendError(req, res, 405, 'method not allowed');
      } else if (!check.ok) {
        sendError(req, res, check.reason === 'malformed' ? 400 : 403, check.reason);
      } else if (check.method === 'GET') {
        await serveGet(store, check.key, req, res);
      } else if (check.uploadId !== undefined && check.partNumber !== undefined) {
        const etag = await store.writeUploadPart(
          { uploadId: check.uploadId, key: check.key },
          check.partNumber,
          req,
        );
        res.writeHead(200, { ETag: `"${etag}"`, 'Content-Length': '0' }).end();
      } else {
        const sentType = req.headers['content-type'];
        if (check.contentType !== undefined && sentType !== check.contentType) {
          // S3 signs Content-Type as a header; requiring an exact match gives the same contract.
          sendError(req, res, 403, `Content-Type must be ${check.contentType}`);
        } else {
          const result = await store.put(check.key, req, { contentType: check.contentType ?? sentType });
          res.writeHead(200, { ETag: `"${result.sha256}"`, 'Content-Length': '0' }).end();
        }
      }
    } catch (error) {
      if (error instanceof BlobNotFoundError || error instanceof MultipartUploadNotFoundError) {
        sendError(req, res, 404, error.message);
      } else if (error instanceof InvalidBlobKeyError || error instanceof RangeError) {
        sendError(req, res, 400, error.message);
      } else if (error instanceof RangeNotSatisfiableError) {
        res.setHeader('Content-Range', `bytes */${error.size}`);
        sendError(req, res, 416, error.message);
      } else {
        sendError(req, res, 500, 'internal error');
      }
    }
    return true;
  };
}

/** The same handler as express-style middleware: unrelated requests go to `next`. */
export function createFsPresignedMiddleware(
  store: FsBlobStore,
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const handle = createFsPresignedHandler(store);
  return (req, res, next) => {
    handle(req, res).then(
      (handled) => {
        if (!handled) next();
      },
      (error: unknown) => next(error),
    );
  };
}

async function serveGet(
  store: FsBlobStore,
  key: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const head = await store.head(key);
  if (!head) throw new BlobNotFoundError(key);
  let range: ByteRange | undefined;
  if (req.headers.range !== undefined) {
    const parsed = parseRangeHeader(req.headers.range, head.size);
    if (parsed === 'unsatisfiable') throw new RangeNotSatisfiableError(key, head.size);
    range = parsed ?? undefined;
  }
  const result = await store.get(key, range);
  const headers: Record<string, string> = {
    'Content-Type': result.contentType,
    'Content-Length': String(result.size),
    'Accept-Ranges': 'bytes',
    'Last-Modified': head.lastModified.toUTCString(),
  };
  if (head.sha256) headers.ETag = `"${head.sha256}"`;
  if (result.range)
    headers['Content-Range'] = `bytes ${result.range.start}-${result.range.end}/${result.totalSize}`;
  res.writeHead(result.range ? 206 : 200, headers);
  if (req.method === 'HEAD') {
    result.body.destroy();
    res.end();
    return;
  }
  try {
    await pipeline(result.body, res);
  } catch {
    // The client went away mid-body; the status line is out, so dropping the connection is all that is left.
    res.destroy();
  }
}

/**
 * One `bytes=` range, including suffix ranges. Returns null for headers to ignore (multiple ranges, other
 * units, garbage), which RFC 9110 allows answering with the whole content.
 */
export function parseRangeHeader(header: string, size: number): ByteRange | 'unsatisfiable' | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, startText, endText] = match;
  if (startText === '') {
    if (endText === '') return null;
    const suffix = Number(endText);
    if (!Number.isSafeInteger(suffix)) return null;
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(startText);
  const end = endText === '' ? undefined : Number(endText);
  if (!Number.isSafeInteger(start) || (end !== undefined && (!Number.isSafeInteger(end) || end < start)))
    return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: end === undefined ? undefined : Math.min(end, size - 1) };
}

function sendError(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // The error body both hosts answer with (DECISIONS.md section 0).
  const code: ErrorCode =
    status === 403
      ? 'forbidden'
      : status === 404
        ? 'not_found'
        : status === 416
          ? 'range_not_satisfiable'
          : status >= 500
            ? 'internal'
            : 'validation_failed';
  const rawUrl = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const body = JSON.stringify({
    detail: message,
    code,
    path: rawUrl.split('?')[0],
    timestamp: new Date().toISOString(),
  });
  // An unread upload body would otherwise be left in the keep-alive connection.
  if (!req.complete) res.setHeader('Connection', 'close');
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}
