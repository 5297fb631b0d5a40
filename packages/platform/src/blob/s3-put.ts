// put() of S3BlobStore: small bodies in one PutObject with their sha256, long streams as multipart uploads from reused buffers.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Upload } from '@aws-sdk/lib-storage';
import { DEFAULT_CONTENT_TYPE, type PutOptions, type PutResult } from './blob-store';
import { normalizeMetadata } from './blob-validation';
import { abortMultipartUpload, assembleParts, createMultipartUpload } from './s3-multipart';
import { writeParts } from './s3-part-writer';
import type { S3Target } from './s3-protocol';
import { MAX_COPY_OBJECT_BYTES, SHA256_METADATA, stampSha256 } from './s3-sha256';
import { readUpTo, replay } from './s3-streams';

const PART_SIZE = 8 * 1024 * 1024;
// Parts in flight for a long stream, each in a buffer reused for the whole upload (bench/api-upload).
const SLOTS = 4;
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
  // Reading the first part before anything else tells us whether the hash can
  // go in with the object or needs a restamp afterwards.
  const start = await readUpTo(body, PART_SIZE);
  if (start.ended) return putBuffer(s3, key, Buffer.concat(start.chunks), contentType, metadata);

  const hash = createHash('sha256');
  let size = 0;
  async function* hashed(): AsyncGenerator<Buffer> {
    for await (const chunk of replay(start.chunks, start.iterator)) {
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
  }
  const upload = await createMultipartUpload(s3, key, { contentType, metadata });
  let etag: string | undefined;
  try {
    const parts = await writeParts(s3, upload, hashed(), { partSize: PART_SIZE, slots: SLOTS });
    etag = await assembleParts(s3, upload, parts);
  } catch (error) {
    body.destroy();
    await abortMultipartUpload(s3, upload).catch(() => undefined);
    throw error;
  }
  const sha256 = hash.digest('hex');
  if (size <= MAX_COPY_OBJECT_BYTES)
    await stampSha256(s3.client, s3.bucket, key, etag, contentType, metadata, sha256);
  return { key, size, sha256 };
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
