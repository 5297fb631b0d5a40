import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

/** The slice of s3rver 3.x we use (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  resetOnClose: boolean;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

export interface RunningS3rver {
  /** `http://127.0.0.1:<port>`; use with forcePathStyle. */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** Every key in the bucket under `prefix` (through the S3 API, as a client would see them). */
  keys(prefix?: string): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * Starts an in-process s3rver on a free port, storing into a fresh temp folder, with one bucket.
 * s3rver accepts SigV4 requests and presigned URLs without checking the signature (it only checks the key
 * id and expiry), does not implement AbortMultipartUpload, and does not enforce the 5 MB minimum part size.
 */
export async function startS3rver(options: { bucket?: string } = {}): Promise<RunningS3rver> {
  // A plain require: without type declarations an import would not compile.
  const S3rver: S3rverConstructor = require('s3rver');
  const directory = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  const bucket = options.bucket ?? 'test-bucket';
  const server = new S3rver({
    // An IP rather than localhost: s3rver treats other host names as virtual-hosted bucket names.
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    resetOnClose: false,
    configureBuckets: [{ name: bucket }],
  });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    // s3rver's built-in account.
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    region: 'us-east-1',
    async keys(prefix = '') {
      const client = new S3Client({
        endpoint: `http://127.0.0.1:${address.port}`,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      });
      try {
        const keys: string[] = [];
        let token: string | undefined;
        do {
          const page = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
          );
          keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
          token = page.NextContinuationToken;
        } while (token);
        return keys;
      } finally {
        client.destroy();
      }
    },
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** The S3_* variables that point a service at `s3` (as docker-compose points it at MinIO). */
export function s3Env(s3: RunningS3rver): Record<string, string> {
  return {
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
  };
}
