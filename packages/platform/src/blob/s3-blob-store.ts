import { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
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
  type PresignOptions,
  type PutOptions,
  type PutResult,
  RangeNotSatisfiableError,
} from './blob-store';
import { assertValidBlobKey, assertValidRange } from './blob-validation';
import {
  abortMultipartUpload,
  abortMultipartUploadsStartedBefore,
  completeMultipartUpload,
  createMultipartUpload,
  presignUploadPart,
} from './s3-multipart';
import {
  copySource,
  ensureBucket,
  errorName,
  httpStatus,
  isMissingKey,
  parseContentRange,
  type S3Target,
} from './s3-protocol';
import { putObject } from './s3-put';
import { SHA256_METADATA } from './s3-sha256';

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

  /** Bucket and clients, as the multipart helpers take them. */
  private readonly s3: S3Target;

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
    this.s3 = { client: this.client, presignClient: this.presignClient, bucket: this.bucket };
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<PutResult> {
    assertValidBlobKey(key);
    return putObject(this.s3, key, body, options);
  }

  /** S3 answers the type with the bytes: the same request as `get` (`immutable` changes nothing). */
  read(key: string, range?: ByteRange): Promise<GetResult> {
    return this.get(key, range);
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
    return createMultipartUpload(this.s3, key, options);
  }

  async presignUploadPart(
    upload: MultipartUpload,
    partNumber: number,
    options: PresignOptions,
  ): Promise<string> {
    return presignUploadPart(this.s3, upload, partNumber, options);
  }

  async completeMultipartUpload(upload: MultipartUpload, parts: CompletedPart[]): Promise<PutResult> {
    return completeMultipartUpload(this.s3, upload, parts);
  }

  /** Idempotent like delete(): aborting an unknown or finished upload is not an error. */
  async abortMultipartUpload(upload: MultipartUpload): Promise<void> {
    return abortMultipartUpload(this.s3, upload);
  }

  async abortMultipartUploadsStartedBefore(startedBefore: Date, prefix = ''): Promise<number> {
    return abortMultipartUploadsStartedBefore(this.s3, startedBefore, prefix);
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  /** Creates the bucket when it does not exist yet (startup of dev setups, tests). */
  async ensureBucket(): Promise<void> {
    await ensureBucket(this.client, this.bucket, this.region);
  }

  async close(): Promise<void> {
    this.client.destroy();
    this.presignClient.destroy();
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
