import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The slice of s3rver 3.x we use (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  /** Koa's middleware list (s3rver is a Koa app): the shim goes first. */
  middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
}
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
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
  /** The multipart uploads in progress (started, neither completed nor aborted). */
  multipartUploads(): Promise<{ key: string; uploadId: string }[]>;
  stop(): Promise<void>;
}

/**
 * Starts an in-process s3rver on a free port, storing into a fresh temp folder, with one bucket.
 * s3rver accepts SigV4 requests and presigned URLs without checking the signature (it only checks the key
 * id and expiry) and does not enforce the 5 MB minimum part size. It does not implement
 * AbortMultipartUpload or ListMultipartUploads: a shim in front of it does, on its upload folders.
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
  const uploadsDir = path.join(directory, bucket, '._S3rver_uploads');
  const inProgress = async (): Promise<{ key: string; uploadId: string; initiated: Date }[]> => {
    let ids: string[];
    try {
      ids = await readdir(uploadsDir);
    } catch {
      return [];
    }
    const uploads = [];
    for (const uploadId of ids) {
      try {
        const key = await readFile(path.join(uploadsDir, uploadId, 'key'), 'utf8');
        uploads.push({ key, uploadId, initiated: (await stat(path.join(uploadsDir, uploadId))).mtime });
      } catch {
        // Completed or aborted meanwhile.
      }
    }
    return uploads;
  };
  server.middleware.unshift(async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method === 'DELETE' && typeof uploadId === 'string' && ctx.path.startsWith(`/${bucket}/`)) {
      const known = (await inProgress()).some((u) => u.uploadId === uploadId);
      if (known) await rm(path.join(uploadsDir, uploadId), { recursive: true, force: true });
      ctx.status = known ? 204 : 404;
      if (!known) {
        ctx.type = 'application/xml';
        ctx.body = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code></Error>';
      }
      return;
    }
    if (ctx.method === 'GET' && ctx.path.replace(/\/$/, '') === `/${bucket}` && 'uploads' in ctx.query) {
      const prefix = typeof ctx.query.prefix === 'string' ? ctx.query.prefix : '';
      const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      const uploads = (await inProgress()).filter((u) => u.key.startsWith(prefix));
      ctx.type = 'application/xml';
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult>' +
        `<Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>` +
        uploads
          .map(
            (u) =>
              `<Upload><Key>${xml(u.key)}</Key><UploadId>${u.uploadId}</UploadId>` +
              `<Initiated>${u.initiated.toISOString()}</Initiated></Upload>`,
          )
          .join('') +
        '</ListMultipartUploadsResult>';
      return;
    }
    await next();
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
      // Required here, not at the top: every test file loads this kit, few run s3rver.
      const { ListObjectsV2Command, S3Client } =
        require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
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
    async multipartUploads() {
      return (await inProgress()).map(({ key, uploadId }) => ({ key, uploadId }));
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
