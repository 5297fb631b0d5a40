// Multipart uploads of S3BlobStore: the client sends the parts straight to S3 through presigned URLs.

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  type CompletedPart,
  DEFAULT_CONTENT_TYPE,
  type MultipartUpload,
  MultipartUploadNotFoundError,
  type PresignOptions,
  type PutOptions,
  type PutResult,
} from './blob-store';
import {
  assertValidBlobKey,
  assertValidPartNumber,
  normalizeMetadata,
  sortCompletedParts,
} from './blob-validation';
import { HashingStream } from './hashing-stream';
import { errorName, type S3Target } from './s3-protocol';
import { MAX_COPY_OBJECT_BYTES, SHA256_METADATA, stampSha256 } from './s3-sha256';
import { discard } from './s3-streams';

export async function createMultipartUpload(
  s3: S3Target,
  key: string,
  options: PutOptions,
): Promise<MultipartUpload> {
  assertValidBlobKey(key);
  const output = await s3.client.send(
    new CreateMultipartUploadCommand({
      Bucket: s3.bucket,
      Key: key,
      ContentType: options.contentType ?? DEFAULT_CONTENT_TYPE,
      Metadata: normalizeMetadata(options.metadata),
    }),
  );
  if (!output.UploadId) throw new Error(`S3 returned no UploadId for ${key}`);
  return { uploadId: output.UploadId, key };
}

export async function presignUploadPart(
  s3: S3Target,
  upload: MultipartUpload,
  partNumber: number,
  options: PresignOptions,
): Promise<string> {
  assertValidBlobKey(upload.key);
  assertValidPartNumber(partNumber);
  return getSignedUrl(
    s3.presignClient,
    new UploadPartCommand({
      Bucket: s3.bucket,
      Key: upload.key,
      UploadId: upload.uploadId,
      PartNumber: partNumber,
      ...(options.contentLength === undefined ? {} : { ContentLength: options.contentLength }),
    }),
    // A signed Content-Length: S3 refuses a part of another size (SignatureDoesNotMatch).
    options.contentLength === undefined
      ? { expiresIn: options.expiresIn }
      : { expiresIn: options.expiresIn, signableHeaders: new Set(['content-length']) },
  );
}

/** CompleteMultipartUpload of the listed parts; answers the object's ETag. */
export async function assembleParts(
  s3: S3Target,
  upload: MultipartUpload,
  parts: CompletedPart[],
): Promise<string | undefined> {
  const sorted = sortCompletedParts(parts);
  try {
    const { ETag } = await s3.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: s3.bucket,
        Key: upload.key,
        UploadId: upload.uploadId,
        MultipartUpload: {
          Parts: sorted.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })),
        },
      }),
    );
    return ETag;
  } catch (error) {
    if (errorName(error) === 'NoSuchUpload') throw new MultipartUploadNotFoundError(upload.uploadId);
    throw error;
  }
}

export async function completeMultipartUpload(
  s3: S3Target,
  upload: MultipartUpload,
  parts: CompletedPart[],
): Promise<PutResult> {
  assertValidBlobKey(upload.key);
  const etag = await assembleParts(s3, upload, parts);
  // The parts went from the client straight to S3, so the only way to learn the sha256 is to read it back.
  // IfMatch pins the read to the object we just assembled, not a later overwrite.
  const object = await s3.client.send(
    new GetObjectCommand({ Bucket: s3.bucket, Key: upload.key, IfMatch: etag }),
  );
  if (!(object.Body instanceof Readable)) throw new Error('S3 response body is not a Node.js stream');
  const hasher = new HashingStream();
  await pipeline(object.Body, hasher, discard());
  if (hasher.bytesHashed <= MAX_COPY_OBJECT_BYTES) {
    const { [SHA256_METADATA]: _stale, ...metadata } = object.Metadata ?? {};
    await stampSha256(
      s3.client,
      s3.bucket,
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
export async function abortMultipartUpload(s3: S3Target, upload: MultipartUpload): Promise<void> {
  assertValidBlobKey(upload.key);
  try {
    await s3.client.send(
      new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: upload.key, UploadId: upload.uploadId }),
    );
  } catch (error) {
    if (errorName(error) !== 'NoSuchUpload') throw error;
  }
}

/** ListMultipartUploads under `prefix`, aborting those initiated before `startedBefore`. */
export async function abortMultipartUploadsStartedBefore(
  s3: S3Target,
  startedBefore: Date,
  prefix = '',
): Promise<number> {
  let aborted = 0;
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  do {
    const page = await s3.client.send(
      new ListMultipartUploadsCommand({
        Bucket: s3.bucket,
        Prefix: prefix,
        KeyMarker: keyMarker,
        UploadIdMarker: uploadIdMarker,
      }),
    );
    for (const upload of page.Uploads ?? []) {
      if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated >= startedBefore) continue;
      await abortMultipartUpload(s3, { key: upload.Key, uploadId: upload.UploadId });
      aborted++;
    }
    keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
    uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
  } while (keyMarker);
  return aborted;
}
