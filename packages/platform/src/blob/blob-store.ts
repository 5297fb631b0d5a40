import type { Readable } from 'node:stream';

/** Content type stored when a put does not name one (both drivers use the same default). */
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** What a put returns: the size and sha256 computed while the bytes streamed through. */
export interface PutResult {
  key: string;
  size: number;
  /** Lower-case hex sha256 of the content. */
  sha256: string;
}

export interface PutOptions {
  contentType?: string;
  /** Stored with the object and returned by head(). */
  metadata?: Record<string, string>;
}

/** An inclusive byte range, as in HTTP `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  /** Inclusive; omitted means to the end. */
  end?: number;
}

export interface BlobHead {
  key: string;
  size: number;
  contentType: string;
  sha256?: string;
  metadata: Record<string, string>;
  lastModified: Date;
}

export interface GetResult {
  body: Readable;
  /** Bytes in `body` (the range length for a range read). */
  size: number;
  /** The whole object's size. */
  totalSize: number;
  contentType: string;
  range?: { start: number; end: number };
}

export interface PresignOptions {
  /** Seconds the URL stays valid. */
  expiresIn: number;
  contentType?: string;
  /**
   * The exact byte count a PUT through the URL must send (S3: the signed `Content-Length`; the local
   * folder's handler refuses another length, and stops reading at it).
   */
  contentLength?: number;
}

/** A multipart upload the client sends parts to directly (S3) or through us (filesystem). */
export interface MultipartUpload {
  uploadId: string;
  key: string;
}

export interface CompletedPart {
  partNumber: number;
  etag: string;
}

export interface ReadOptions {
  /**
   * The caller never replaces this key's bytes (a versioned key): the local store may keep the file
   * open for the next read (see OpenFiles). Replacing or deleting it through the same store is still
   * safe; another process writing the same folder is not.
   */
  immutable?: boolean;
}

/**
 * One interface for object storage, with an S3 driver and a local-folder driver.
 * Keys are `/`-separated relative paths without `..` segments.
 */
export interface BlobStore {
  readonly driver: 's3' | 'fs';
  /** Streams `body` into `key`; never buffers the whole content. Replaces an existing object. */
  put(key: string, body: Readable | Buffer, options?: PutOptions): Promise<PutResult>;
  /** Throws BlobNotFoundError when missing, RangeNotSatisfiableError for a range past the end. */
  get(key: string, range?: ByteRange): Promise<GetResult>;
  /**
   * The bytes alone, for callers that keep an object's type and size themselves (serving a file
   * whose row has them): as `get`, but the stored content type is not read (`contentType` is the
   * default). Same errors.
   */
  read(key: string, range?: ByteRange, options?: ReadOptions): Promise<GetResult>;
  /** null when missing. */
  head(key: string): Promise<BlobHead | null>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  copy(fromKey: string, toKey: string): Promise<void>;
  presignGet(key: string, options: PresignOptions): Promise<string>;
  presignPut(key: string, options: PresignOptions): Promise<string>;
  createMultipartUpload(key: string, options?: PutOptions): Promise<MultipartUpload>;
  presignUploadPart(upload: MultipartUpload, partNumber: number, options: PresignOptions): Promise<string>;
  completeMultipartUpload(upload: MultipartUpload, parts: CompletedPart[]): Promise<PutResult>;
  abortMultipartUpload(upload: MultipartUpload): Promise<void>;
  /**
   * Aborts every multipart upload under `prefix` started before `startedBefore` (S3
   * ListMultipartUploads + AbortMultipartUpload; the local folder's staging folders), whoever started
   * it: a process killed mid-upload leaves one nothing else knows of. Answers how many were aborted;
   * idempotent, so replicas may run it at once.
   */
  abortMultipartUploadsStartedBefore(startedBefore: Date, prefix?: string): Promise<number>;
  /** Reachability check for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`blob not found: ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

export class RangeNotSatisfiableError extends Error {
  constructor(
    readonly key: string,
    readonly size: number,
  ) {
    super(`range not satisfiable for ${key} (size ${size})`);
    this.name = 'RangeNotSatisfiableError';
  }
}

export class InvalidBlobKeyError extends Error {
  constructor(readonly key: string) {
    super(`invalid blob key: ${JSON.stringify(key)}`);
    this.name = 'InvalidBlobKeyError';
  }
}

export class MultipartUploadNotFoundError extends Error {
  constructor(readonly uploadId: string) {
    super(`multipart upload not found: ${uploadId}`);
    this.name = 'MultipartUploadNotFoundError';
  }
}
