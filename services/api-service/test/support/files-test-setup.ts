import { randomBytes } from 'node:crypto';
import type { FileRecord } from '@hwp/contracts';
import { expectEventually, s3Env, startS3rver } from '@hwp/platform/test-kit';
import request from 'supertest';
import { type ApiTestService, as, startApi, type TestUser } from './api-test-kit';

/** The API host on Postgres, RabbitMQ and an S3 server (s3rver), as production runs it. */
export async function startFilesApi(env: Record<string, string> = {}) {
  const s3 = await startS3rver();
  const api = await startApi({
    ...s3Env(s3),
    // Tests poll for the end of processing: the rate limit has tests of its own.
    RATE_LIMIT_STANDARD_PER_WINDOW: '100000',
    ...env,
  });
  return {
    api,
    s3,
    async stop() {
      await api.stop();
      await s3.stop();
    },
  };
}

export const bytes = (n: number) => randomBytes(n);

/** A request of `user` in `tenantId` (X-Tenant-ID). */
export function inTenant(api: ApiTestService, user: TestUser, tenantId: string) {
  const client = as(api.app, user);
  return {
    get: (path: string) => client.get(path).set('X-Tenant-ID', tenantId),
    post: (path: string) => client.post(path).set('X-Tenant-ID', tenantId),
    put: (path: string) => client.put(path).set('X-Tenant-ID', tenantId),
    patch: (path: string) => client.patch(path).set('X-Tenant-ID', tenantId),
    delete: (path: string) => client.delete(path).set('X-Tenant-ID', tenantId),
  };
}

/** Waits until processing of the file's current revision ended; returns the record then. */
export async function settled(
  client: { get: (path: string) => request.Test },
  file: FileRecord,
): Promise<FileRecord> {
  return expectEventually(
    async () => {
      const res = await client.get(`/files/${file.id}`);
      expect(['ready', 'quarantined', 'failed']).toContain(res.body.processing_status);
      return res.body as FileRecord;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

export { binary } from '@hwp/platform/test-kit';
