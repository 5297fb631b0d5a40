// put() of S3BlobStore: small bodies in one PutObject with their sha256, long streams through Upload.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Upload } from '@aws-sdk/lib-storage';
import { DEFAULT_CONTENT_TYPE, type PutOptions, type PutResult } from './blob-store';
import { normalizeMetadata } from './blob-validation';
import { HashingStream } from './hashing-stream';
import type { S3Target } from './s3-protocol';
import { MAX_COPY_OBJECT_BYTES, SHA256_METADATA, stampSha256 } from './s3-sha256';
import { readUpTo, replay } from './s3-streams';

const PART_SIZE = 8 * 1024 * 1024;
// Two parts in flight keep a 200 MB upload within the same throughput (bench/blob-stream) while
// holding peak memory growth near 50 MB; four parts pushed it past 64 MB.
const QUEUE_SIZE = 2;

/** put() of S3BlobStore, after the key check. */
export async function putObject(
  s3: S3Target,
  key: string,
  body: Readable | Buffer,
  options: PutOptions,
): Promise<PutResult> {
  const contentType = options.contentType ?? DEFAULT_CONTENT_TYPE;
  const metadata = normalizeMetadata(options.metadata);
  if (Buffer.isBuffer(body)) return putBuffer(s3, key, body, contentType, metadata);
  // Upload buffers a whole part before sending anyway; doing it here first tells us whether the hash can
  // go in with the object or needs a restamp afterwards.
  const start = await readUpTo(body, PART_SIZE);
  if (start.ended) return putBuffer(s3, key, Buffer.concat(start.chunks), contentType, metadata);

  const hasher = new HashingStream();
  const source = Readable.from(replay(start.chunks, start.iterator));
  // The source's own error explains a failed upload better than the SDK's "stream ended" that follows it.
  let feedError: unknown;
  const feeding = pipeline(source, hasher).catch((error: unknown) => {
    feedError ??= error;
  });
  const upload = new Upload({
    client: s3.client,
    params: { Bucket: s3.bucket, Key: key, Body: hasher, ContentType: contentType, Metadata: metadata },
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
    await stampSha256(s3.client, s3.bucket, key, etag, contentType, metadata, hasher.sha256);
  }
  return { key, size: hasher.bytesHashed, sha256: hasher.sha256 };
}

async function putBuffer(
  s3: S3Target,
  key: string,
  body: Buffer,
  contentType: string,
  metadata: Record<string, string>,
): Promise<PutResult> {
  const sha256 = createHash('sha256').update(body).digest('hex');
  const upload = new Upload({
    client: s3.client,
    params: {
      Bucket: s3.bucket,
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
