// S3 wire details: error shapes, the copy-source and Content-Range formats, bucket creation.
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  HeadBucketCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

/** The bucket and the two clients of an S3BlobStore. */
export interface S3Target {
  client: S3Client;
  /** Separate client so presigned URLs carry the public host while server calls use the internal one. */
  presignClient: S3Client;
  bucket: string;
}

/** `bucket/key` with each key segment percent-encoded, as x-amz-copy-source requires. */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

export function parseContentRange(
  header: string | undefined,
): { start: number; end: number; total: number } | null {
  const match = header ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header) : null;
  if (!match) return null;
  return { start: Number(match[1]), end: Number(match[2]), total: Number(match[3]) };
}

export function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

export function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = error.$metadata;
  if (typeof metadata !== 'object' || metadata === null || !('httpStatusCode' in metadata)) return undefined;
  return typeof metadata.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

/** NoSuchKey from GET, a bodiless 404 (named NotFound) from HEAD. NoSuchBucket is a setup error, kept as is. */
export function isMissingKey(error: unknown): boolean {
  const name = errorName(error);
  if (name === 'NoSuchKey' || name === 'NotFound') return true;
  return httpStatus(error) === 404 && name !== 'NoSuchBucket';
}

/** Creates the bucket when it does not exist yet (startup of dev setups, tests). */
export async function ensureBucket(client: S3Client, bucket: string, region: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
    return;
  } catch (error) {
    if (httpStatus(error) !== 404 && errorName(error) !== 'NotFound' && errorName(error) !== 'NoSuchBucket') {
      throw error;
    }
  }
  try {
    await client.send(
      new CreateBucketCommand({
        Bucket: bucket,
        // us-east-1 is the one region that must not be named as a location constraint.
        CreateBucketConfiguration:
          region === 'us-east-1' ? undefined : { LocationConstraint: region as BucketLocationConstraint },
      }),
    );
  } catch (error) {
    // Lost a race with another instance starting up; the bucket is ours either way.
    if (errorName(error) !== 'BucketAlreadyOwnedByYou') throw error;
  }
}
