import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  type BucketLocationConstraint,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  type BlobHead,
  BlobNotFoundError,
  type BlobStore,
  type ByteRange,
  type CompletedPart,
  DEFAULT_CONTENT_TYPE,
  type GetResult,
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
} from './blob-validation';
import { HashingStream } from './hashing-stream';

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** For S3-compatible servers (MinIO, s3rver); omit for AWS. */
  endpoint?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Omit to use the SDK's default provider chain (env, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Endpoint browsers reach when it differs from `endpoint` (e.g. MinIO behind a public hostname). */
  publicEndpoint?: string;
}

const PART_SIZE = 8 * 1024 * 1024;
// Two parts in flight keep a 200 MB upload within the same throughput (bench/blob-stream) while
// holding peak memory growth near 50 MB; four parts pushed it past 64 MB.
const QUEUE_SIZE = 2;
/** CopyObject's limit; restamping metadata on larger objects would need a multipart UploadPartCopy. */
const MAX_COPY_OBJECT_BYTES = 5 * 1024 ** 3;
/** User metadata name holding the content's sha256 (S3 sends it as `x-amz-meta-sha256`). */
const SHA256_METADATA = 'sha256';

/**
 * Blob store over S3 or an S3-compatible server.
 *
 * Where the sha256 comes from, as S3 itself does not compute one:
 * - put() hashes on the way in. Bodies up to one part (8 MB) are hashed before the single PutObject, so
 *   the `sha256` metadata goes in with the object. Longer streams are only hashed once the last byte has
 *   left, after S3 has fixed the metadata, so put() then restamps the object with a CopyObject onto itself.
 * - completeMultipartUpload() never saw the bytes (the client sent them to S3), so it reads the object back
 *   once, hashes it and restamps it the same way. That costs one full read of the object.
 * - Objects over 5 GiB are not restamped (CopyObject's limit): put() and complete still return the
 *   sha256, but head() reports none for them. Objects uploaded through presignPut() carry no sha256 either.
 */
export class S3BlobStore implements BlobStore {
  readonly driver = 's3' as const;
  readonly bucket: string;
  private readonly region: string;
  private readonly client: S3Client;
  /** Separate client so presigned URLs carry the public host while server calls use the internal one. */
  private readonly presignClient: S3Client;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.region = options.region;
    const base = {
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      // Newer SDKs add CRC32 checksums (aws-chunked trailers) that s3rver and older MinIO reject.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    } as const;
    this.client = new S3Client({ ...base, endpoint: options.endpoint });
    this.presignClient = new S3Client({ ...base, endpoint: options.publicEndpoint ?? options.endpoint });
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<PutResult> {
    assertValidBlobKey(key);
    const contentType = options.contentType ?? DEFAULT_CONTENT_TYPE;
    const metadata = normalizeMetadata(options.metadata);
    if (Buffer.isBuffer(body)) return this.putBuffer(key, body, contentType, metadata);
    // Upload buffers a whole part before sending anyway; doing it here first tells us whether the hash can
    // go in with the object or needs a restamp afterwards.
    const start = await readUpTo(body, PART_SIZE);
    if (start.ended) return this.putBuffer(key, Buffer.concat(start.chunks), contentType, metadata);

    const hasher = new HashingStream();
    const source = Readable.from(replay(start.chunks, start.iterator));
    // The source's own error explains a failed upload better than the SDK's "stream ended" that follows it.
    let feedError: unknown;
    const feeding = pipeline(source, hasher).catch((error: unknown) => {
      feedError ??= error;
    });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: hasher, ContentType: contentType, Metadata: metadata },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
    });
    let etag: string | undefined;
    try {
      ({ ETag: etag } = await upload.done());
    } catch (error) {
      const cause = feedError ?? error;
      source.destroy();
      hasher.destroy();
      await feeding;
      throw cause;
    }
    await feeding;
    if (feedError) throw feedError;
    if (hasher.bytesHashed <= MAX_COPY_OBJECT_BYTES) {
      await this.stampSha256(key, etag, contentType, metadata, hasher.sha256);
    }
    return { key, size: hasher.bytesHashed, sha256: hasher.sha256 };
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    assertValidBlobKey(key);
    if (range) assertValidRange(range);
    let output: GetObjectCommandOutput;
    try {
      output = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end ?? ''}` : undefined,
        }),
      );
    } catch (error) {
      if (isMissingKey(error)) throw new BlobNotFoundError(key);
      if (errorName(error) === 'InvalidRange' || httpStatus(error) === 416) {
        throw new RangeNotSatisfiableError(key, await this.sizeFromRangeError(key, error));
      }
      throw error;
    }
    const body = output.Body;
    if (!(body instanceof Readable)) throw new Error('S3 response body is not a Node.js stream');
    const size = output.ContentLength ?? 0;
    const contentType = output.ContentType ?? DEFAULT_CONTENT_TYPE;
    if (!range) return { body, size, totalSize: size, contentType };
    const served = parseContentRange(output.ContentRange);
    if (!served) {
      body.destroy();
      throw new Error(`S3 ignored the Range header for ${key}`);
    }
    // Handing out bytes other than the ones asked for would corrupt callers; s3rver does it for `bytes=0-0`.
    if (served.start !== range.start || (range.end !== undefined && served.end > range.end)) {
      body.destroy();
      throw new Error(
        `S3 served ${output.ContentRange} for bytes=${range.start}-${range.end ?? ''} of ${key}`,
      );
    }
    // s3rver answers a range on an empty object with `bytes 0-0/0` instead of 416; S3 itself never does.
    if (range.start >= served.total) {
      body.destroy();
      throw new RangeNotSatisfiableError(key, served.total);
    }
    return {
      body,
      size,
      totalSize: served.total,
      contentType,
      range: { start: served.start, end: served.end },
    };
  }

  async head(key: string): Promise<BlobHead | null> {
    assertValidBlobKey(key);
    let output: HeadObjectCommandOutput;
    try {
      output = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      if (isMissingKey(error)) return null;
      throw error;
    }
    const { [SHA256_METADATA]: sha256, ...metadata } = output.Metadata ?? {};
    return {
      key,
      size: output.ContentLength ?? 0,
      contentType: output.ContentType ?? DEFAULT_CONTENT_TYPE,
      sha256,
      metadata,
      lastModified: output.LastModified ?? new Date(0),
    };
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Server-side copy keeping content type and metadata; CopyObject limits it to objects up to 5 GiB. */
  async copy(fromKey: string, toKey: string): Promise<void> {
    assertValidBlobKey(fromKey);
    assertValidBlobKey(toKey);
    if (fromKey === toKey) {
      // S3 rejects a copy onto itself that changes nothing; for us it is simply a no-op on an existing key.
      if (!(await this.head(fromKey))) throw new BlobNotFoundError(fromKey);
      return;
    }
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: toKey,
          CopySource: copySource(this.bucket, fromKey),
          MetadataDirective: 'COPY',
        }),
      );
    } catch (error) {
      if (isMissingKey(error)) throw new BlobNotFoundError(fromKey);
      throw error;
    }
  }

  async presignGet(key: string, options: PresignOptions): Promise<string> {
    assertValidBlobKey(key);
    return getSignedUrl(this.presignClient, new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: options.expiresIn,
    });
  }

  /** With `contentType`, the uploader must send exactly that Content-Type (it is a signed header). */
  async presignPut(key: string, options: PresignOptions): Promise<string> {
    assertValidBlobKey(key);
    return getSignedUrl(
      this.presignClient,
      new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: options.contentType }),
      { expiresIn: options.expiresIn },
    );
  }

  async createMultipartUpload(key: string, options: PutOptions = {}): Promise<MultipartUpload> {
    assertValidBlobKey(key);
    const output = await this.client.send(
      new CreateMultipartUploadCommand({
        Bucket: this.bucket,
        Key: key,
        ContentType: options.contentType ?? DEFAULT_CONTENT_TYPE,
        Metadata: normalizeMetadata(options.metadata),
      }),
    );
    if (!output.UploadId) throw new Error(`S3 returned no UploadId for ${key}`);
    return { uploadId: output.UploadId, key };
  }

  async presignUploadPart(
    upload: MultipartUpload,
    partNumber: number,
    options: PresignOptions,
  ): Promise<string> {
    assertValidBlobKey(upload.key);
    assertValidPartNumber(partNumber);
    return getSignedUrl(
      this.presignClient,
      new UploadPartCommand({
        Bucket: this.bucket,
        Key: upload.key,
        UploadId: upload.uploadId,
        PartNumber: partNumber,
      }),
      { expiresIn: options.expiresIn },
    );
  }

  async completeMultipartUpload(upload: MultipartUpload, parts: CompletedPart[]): Promise<PutResult> {
    assertValidBlobKey(upload.key);
    const sorted = sortCompletedParts(parts);
    let etag: string | undefined;
    try {
      ({ ETag: etag } = await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: upload.key,
          UploadId: upload.uploadId,
          MultipartUpload: {
            Parts: sorted.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })),
          },
        }),
      ));
    } catch (error) {
      if (errorName(error) === 'NoSuchUpload') throw new MultipartUploadNotFoundError(upload.uploadId);
      throw error;
    }
    // The parts went from the client straight to S3, so the only way to learn the sha256 is to read it back.
    // IfMatch pins the read to the object we just assembled, not a later overwrite.
    const object = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: upload.key, IfMatch: etag }),
    );
    if (!(object.Body instanceof Readable)) throw new Error('S3 response body is not a Node.js stream');
    const hasher = new HashingStream();
    await pipeline(object.Body, hasher, discard());
    if (hasher.bytesHashed <= MAX_COPY_OBJECT_BYTES) {
      const { [SHA256_METADATA]: _stale, ...metadata } = object.Metadata ?? {};
      await this.stampSha256(
        upload.key,
        etag,
        object.ContentType ?? DEFAULT_CONTENT_TYPE,
        metadata,
        hasher.sha256,
      );
    }
    return { key: upload.key, size: hasher.bytesHashed, sha256: hasher.sha256 };
  }

  /** Idempotent like delete(): aborting an unknown or finished upload is not an error. */
  async abortMultipartUpload(upload: MultipartUpload): Promise<void> {
    assertValidBlobKey(upload.key);
    try {
      await this.client.send(
        new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, UploadId: upload.uploadId }),
      );
    } catch (error) {
      if (errorName(error) !== 'NoSuchUpload') throw error;
    }
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  /** Creates the bucket when it does not exist yet (startup of dev setups, tests). */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (error) {
      if (
        httpStatus(error) !== 404 &&
        errorName(error) !== 'NotFound' &&
        errorName(error) !== 'NoSuchBucket'
      ) {
        throw error;
      }
    }
    try {
      await this.client.send(
        new CreateBucketCommand({
          Bucket: this.bucket,
          // us-east-1 is the one region that must not be named as a location constraint.
          CreateBucketConfiguration:
            this.region === 'us-east-1'
              ? undefined
              : { LocationConstraint: this.region as BucketLocationConstraint },
        }),
      );
    } catch (error) {
      // Lost a race with another instance starting up; the bucket is ours either way.
      if (errorName(error) !== 'BucketAlreadyOwnedByYou') throw error;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
    this.presignClient.destroy();
  }

  private async putBuffer(
    key: string,
    body: Buffer,
    contentType: string,
    metadata: Record<string, string>,
  ): Promise<PutResult> {
    const sha256 = createHash('sha256').update(body).digest('hex');
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        Metadata: { ...metadata, [SHA256_METADATA]: sha256 },
      },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
    });
    await upload.done();
    return { key, size: body.length, sha256 };
  }

  /** Rewrites the object's metadata in place (S3 has no metadata-only update). */
  private async stampSha256(
    key: string,
    etag: string | undefined,
    contentType: string,
    metadata: Record<string, string>,
    sha256: string,
  ): Promise<void> {
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: key,
          CopySource: copySource(this.bucket, key),
          CopySourceIfMatch: etag,
          MetadataDirective: 'REPLACE',
          ContentType: contentType,
          Metadata: { ...metadata, [SHA256_METADATA]: sha256 },
        }),
      );
    } catch (error) {
      // Someone overwrote the key since; their object is not ours to stamp, and ours is gone anyway.
      if (errorName(error) === 'PreconditionFailed' || httpStatus(error) === 412) return;
      throw error;
    }
  }

  private async sizeFromRangeError(key: string, error: unknown): Promise<number> {
    // S3 puts the size in the error body; the SDK copies unmodelled fields onto the exception.
    const reported =
      typeof error === 'object' && error !== null && 'ActualObjectSize' in error
        ? Number(error.ActualObjectSize)
        : Number.NaN;
    if (Number.isSafeInteger(reported)) return reported;
    const head = await this.head(key);
    if (!head) throw new BlobNotFoundError(key);
    return head.size;
  }
}

/** `bucket/key` with each key segment percent-encoded, as x-amz-copy-source requires. */
function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

function parseContentRange(header: string | undefined): { start: number; end: number; total: number } | null {
  const match = header ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header) : null;
  if (!match) return null;
  return { start: Number(match[1]), end: Number(match[2]), total: Number(match[3]) };
}

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = error.$metadata;
  if (typeof metadata !== 'object' || metadata === null || !('httpStatusCode' in metadata)) return undefined;
  return typeof metadata.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

/** NoSuchKey from GET, a bodiless 404 (named NotFound) from HEAD. NoSuchBucket is a setup error, kept as is. */
function isMissingKey(error: unknown): boolean {
  const name = errorName(error);
  if (name === 'NoSuchKey' || name === 'NotFound') return true;
  return httpStatus(error) === 404 && name !== 'NoSuchBucket';
}

function discard(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}

interface StreamStart {
  chunks: Buffer[];
  ended: boolean;
  iterator: AsyncIterator<unknown>;
}

async function readUpTo(body: Readable, limit: number): Promise<StreamStart> {
  const iterator: AsyncIterator<unknown> = body[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let bytes = 0;
  while (bytes <= limit) {
    const next = await iterator.next();
    if (next.done) return { chunks, ended: true, iterator };
    const chunk = toBuffer(next.value);
    chunks.push(chunk);
    bytes += chunk.length;
  }
  return { chunks, ended: false, iterator };
}

/** The bytes already read, then the rest of the stream; closing early closes the source. */
async function* replay(chunks: Buffer[], iterator: AsyncIterator<unknown>): AsyncGenerator<Buffer> {
  try {
    yield* chunks;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield toBuffer(next.value);
    }
  } finally {
    await iterator.return?.();
  }
}

function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk);
  throw new TypeError('blob bodies must stream bytes or strings');
}
