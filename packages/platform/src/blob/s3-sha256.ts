import { CopyObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { copySource, errorName, httpStatus } from './s3-protocol';

/** CopyObject's limit; restamping metadata on larger objects would need a multipart UploadPartCopy. */
export const MAX_COPY_OBJECT_BYTES = 5 * 1024 ** 3;
/** User metadata name holding the content's sha256 (S3 sends it as `x-amz-meta-sha256`). */
export const SHA256_METADATA = 'sha256';

/** Rewrites the object's metadata in place (S3 has no metadata-only update). */
export async function stampSha256(
  client: S3Client,
  bucket: string,
  key: string,
  etag: string | undefined,
  contentType: string,
  metadata: Record<string, string>,
  sha256: string,
): Promise<void> {
  try {
    await client.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: key,
        CopySource: copySource(bucket, key),
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
