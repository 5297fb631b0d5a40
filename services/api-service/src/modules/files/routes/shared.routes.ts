import { DownloadQuery, ErrorBodyDto, FileList, FileRecord, PageQuery } from '@hwp/contracts';
import { type ApiRouter, UnauthorizedError } from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import { type Downloads, downloadResponses, sendFile } from '../file-download';
import { presentFile } from '../files.presenter';
import type { FilesService } from '../files.service';

const tags = ['files'];
const notShared = { description: 'No such file shared with the caller', schema: ErrorBodyDto };

function userOf(req: Request): string {
  if (!req.user) throw new UnauthorizedError();
  return req.user.id;
}

/**
 * The cross-tenant routes (DECISIONS.md section 2): files of other tenants whose permissions name
 * the caller or one of their teams. Signed in, rate limited, no tenant resolution.
 */
export function mountSharedRoutes(
  api: ApiRouter,
  files: FilesService,
  downloads: Downloads,
  signedIn: RequestHandler[],
): void {
  const common = { tags, security: ['bearerAuth'], before: signedIn, rateLimited: true };
  api.route({
    ...common,
    method: 'get',
    path: '/shared-with-me',
    summary: 'Files of other tenants shared with the caller or one of their teams',
    query: PageQuery,
    responses: { 200: { description: 'A page of file records', schema: FileList } },
    handler: ({ query, req }) => files.sharedWithMe(userOf(req), query),
  });
  api.route({
    ...common,
    method: 'get',
    path: '/shared/:file_id',
    summary: 'One file shared with the caller from another tenant',
    responses: { 200: { description: 'The file record', schema: FileRecord }, 404: notShared },
    handler: async ({ params, req }) => {
      const { file, revision } = await files.openShared(userOf(req), params.file_id);
      return presentFile(file, revision);
    },
  });
  api.route({
    ...common,
    method: 'get',
    path: '/shared/:file_id/download',
    summary: 'Download a file shared with the caller from another tenant (Range supported)',
    query: DownloadQuery,
    responses: {
      ...downloadResponses,
      404: notShared,
    },
    handler: async ({ params, req, res }) =>
      sendFile(downloads, await files.openShared(userOf(req), params.file_id), req, res),
  });
}
