import { DownloadQuery } from '@hwp/contracts';
import { UnauthorizedError } from '@hwp/platform';
import { type RequestHandler, Router } from 'express';
import { requestTenant } from '../../tenancy/tenant-context';
import type { FileAccessClaims, FileAccessTokens } from '../file-access-tokens';
import { type Downloads, downloadResponses, sendFile } from '../file-download';
import { type FileRouting, fileNotFound } from './file-routing';

/**
 * The credential of a download (section 5.1.6): a bearer header, or `?token=` holding either a file
 * access token (then only the rate limit runs) or an ordinary access token (then the usual chain).
 */
function downloadCredential(
  tokens: FileAccessTokens,
  signedIn: RequestHandler[],
  limit: RequestHandler,
): RequestHandler {
  const signedInChain = Router();
  signedInChain.use(...signedIn);
  return async (req, res, next) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    if (token !== undefined && !req.get('authorization')) {
      const claims = await tokens.verify(token);
      if (claims) {
        res.locals.fileToken = claims;
        limit(req, res, next);
        return;
      }
      req.headers.authorization = `Bearer ${token}`;
    }
    signedInChain(req, res, next);
  };
}

export const downloadFile = (
  { api, files, signedIn }: FileRouting,
  downloads: Downloads,
  tokens: FileAccessTokens,
  limit: RequestHandler,
) =>
  api.route({
    method: 'get',
    path: '/files/:file_id/download',
    summary: 'Download the current revision (bearer, or `?token=`); Range supported',
    description:
      'Sent as an attachment with `X-Content-Type-Options: nosniff` and a sandboxing Content-Security-Policy, ' +
      'so an uploaded SVG or HTML never runs in this origin. `token` may be a file access token from ' +
      '`GET /files/{file_id}/access-token` (this file only) or an access token. One `bytes=` range answers 206; ' +
      'a range past the end 416; several ranges the whole file. Quarantined files answer 403.',
    tags: ['files'],
    security: ['bearerAuth'],
    rateLimited: true,
    before: [downloadCredential(tokens, signedIn, limit)],
    query: DownloadQuery,
    responses: {
      ...downloadResponses,
      404: fileNotFound,
    },
    handler: async ({ params, req, res }) => {
      const claims = res.locals.fileToken as FileAccessClaims | undefined;
      if (claims) {
        if (claims.fileId !== params.file_id)
          throw new UnauthorizedError('This access token opens another file');
        return sendFile(downloads, await files.openForToken(claims), req, res);
      }
      if (!req.user) throw new UnauthorizedError();
      return sendFile(downloads, await files.open(requestTenant(req), req.user.id, params.file_id), req, res);
    },
  });
