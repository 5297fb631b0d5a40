import { ErrorBodyDto, PresignedBlobQuery } from '@hwp/contracts';
import { createFsPresignedHandler, FsBlobStore } from '../blob';
import type { PlatformDeps } from '../deps';
import { NotFoundError } from '../errors';
import type { ApiRouter } from './api-router';
import { binaryResponse } from './openapi';

/**
 * Serves the pre-signed URLs of the local-folder blob driver (S3 serves its own), so clients use
 * the same flow on the embedded default as on S3: GET (with Range) and PUT of objects and parts.
 */
export function mountBlobRoutes(api: ApiRouter, deps: Pick<PlatformDeps, 'blobs' | 'blobRoutePrefix'>): void {
  const handle = deps.blobs instanceof FsBlobStore ? createFsPresignedHandler(deps.blobs) : undefined;
  const path = `${deps.blobRoutePrefix}/*key`;
  const serve = async (
    req: Parameters<NonNullable<typeof handle>>[0],
    res: Parameters<NonNullable<typeof handle>>[1],
  ) => {
    if (!handle || !(await handle(req, res))) throw new NotFoundError('No such pre-signed blob URL');
  };
  api.route({
    method: 'get',
    path,
    summary: 'Download through a pre-signed URL of the local blob driver (Range supported)',
    tags: ['storage'],
    query: PresignedBlobQuery,
    responses: {
      200: binaryResponse('The object'),
      206: binaryResponse('The requested range'),
      403: { description: 'Bad signature or expired URL', schema: ErrorBodyDto },
      404: { description: 'No such object', schema: ErrorBodyDto },
      416: { description: 'Range not satisfiable', schema: ErrorBodyDto },
    },
    handler: ({ req, res }) => serve(req, res),
  });
  api.route({
    method: 'put',
    path,
    summary: 'Upload an object or a multipart part through a pre-signed URL of the local blob driver',
    tags: ['storage'],
    query: PresignedBlobQuery,
    bodyContent: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    responses: {
      200: { description: 'Stored; ETag header carries the sha256 (or the part etag)' },
      403: { description: 'Bad signature, expired URL or wrong Content-Type', schema: ErrorBodyDto },
    },
    handler: ({ req, res }) => serve(req, res),
  });
}
