import {
  BatchUploadResult,
  DeleteResult,
  ErrorBodyDto,
  FileMeta,
  FileQuery,
  FolderQuery,
  MAX_BATCH_FILES,
  RestoreRequest,
  SharedFileList,
  SignedServeQuery,
  SignedUrl,
  SignedUrlQuery,
  TextPreview,
  TrashList,
  UploadForm,
  UploadResult,
  WorkspaceFilesQuery,
} from '@hwp/contracts';
import {
  AppError,
  announcedSizeGuard,
  binaryResponse,
  type RawQuery,
  runMiddleware,
  storedUploads,
  streamingUpload,
  validateInput,
} from '@hwp/platform';
import type { Request, RequestHandler, Response } from 'express';
import { fromBody, fromParam, fromQuery } from '../../workspace-access/workspace-access';
import { type CollabRoute, memberRoute, openRoute } from '../../workspace-access/workspace-route';
import type { WorkspaceScope } from '../../workspace-access/workspace-scope';
import { assertCanWrite } from '../file-guards';
import { checkFilename, type FilePath, versionKey } from '../file-paths';
import { parseServePath, serveFile, type UrlSigner } from '../file-serving';
import type { FileTrash } from '../file-trash.service';
import type { FileWrites } from '../file-writes.service';
import type { SharedFilesService } from '../shared-files.service';
import { FORBIDDEN_FOLDER, INVALID, LOCKED, NOT_FOUND, TAGS } from './file-routing';

const uploadForm = (files: string) => ({
  'multipart/form-data': {
    schema: {
      type: 'object',
      required: [files],
      properties: {
        [files]:
          files === 'file'
            ? { type: 'string', format: 'binary' }
            : { type: 'array', items: { type: 'string', format: 'binary' }, maxItems: MAX_BATCH_FILES },
        baseVersion: { type: 'string', description: 'The etag the client last saw' },
        replace: { type: 'string', enum: ['true', 'false'], description: '`true` skips the etag check' },
        message: { type: 'string', maxLength: 2000 },
        branch: { type: 'string', description: 'A branch of the file (when branch writes use the column)' },
      },
    },
  },
});

/** Streams the parts to `<workspace>/<username>/<filename>/<version id>` once the caller may write the folder. */
async function receive(
  files: Pick<SharedFilesService, 'blobs'>,
  maxBytes: number,
  fields: string[],
  maxFiles: number,
  workspace: WorkspaceScope,
  username: string,
  req: Request,
  res: Response,
) {
  const keyOf = (_req: Request, id: string, name: string) =>
    versionKey({ workspace: workspace.name, username, filename: checkFilename(name) }, id);
  await runMiddleware(streamingUpload(files.blobs, keyOf, { fields, maxFiles, maxBytes }), req, res);
  const stored = storedUploads(req);
  const form = await validateInput(UploadForm, { ...(req.body as object) }, 'body').catch(
    async (error: unknown) => {
      for (const s of stored) await files.blobs.delete(s.key).catch(() => undefined);
      throw error;
    },
  );
  if (stored.length === 0) {
    throw new AppError('validation_failed', `The form has no file part named "${fields[0]}"`, {
      errors: [{ field: fields[0], message: 'required' }],
    });
  }
  return { stored, form };
}

export function uploadFile(writes: FileWrites, maxBytes: number, limit: RequestHandler): CollabRoute {
  return memberRoute<unknown, FolderQuery>({
    method: 'post',
    path: '/v1/upload',
    summary: 'Upload a file (a new version) with optimistic concurrency',
    description:
      '`baseVersion` is the etag the client last saw: when the file’s current etag differs (or no baseVersion is given ' +
      'for a file that exists), the upload is kept whole as `<stem>_conflict_<username>_<time><.ext>` beside it and the ' +
      'answer is 409 `version_conflict` with `currentEtag` and `conflict`. `replace=true` skips the check; the same bytes ' +
      'again are no conflict. Streams to storage (sha256 on the way); over MAX_UPLOAD_MB: 413. A user writes their own ' +
      'folder (managers any); 423 while another user holds the lock; 30 per minute per workspace and address.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromQuery('workspace'),
    query: FolderQuery,
    before: [limit, announcedSizeGuard(maxBytes)],
    bodyContent: uploadForm('file'),
    status: 201,
    responses: {
      201: { description: 'The new version', schema: UploadResult },
      400: INVALID,
      403: FORBIDDEN_FOLDER,
      409: { description: 'Stale baseVersion: kept as a conflict copy', schema: ErrorBodyDto },
      413: { description: 'Over MAX_UPLOAD_MB', schema: ErrorBodyDto },
      423: LOCKED,
    },
    handler: async ({ query, req, res, user, workspace }) => {
      assertCanWrite(workspace, user, query.username);
      const { stored, form } = await receive(
        writes.files,
        maxBytes,
        ['file'],
        1,
        workspace,
        query.username,
        req,
        res,
      );
      const target: FilePath = {
        workspace: workspace.name,
        username: query.username,
        filename: stored[0].originalName,
      };
      return writes.write(user, workspace, target, stored[0], {
        baseVersion: form.baseVersion,
        replace: form.replace === 'true',
        message: form.message,
        branch: form.branch,
      });
    },
  });
}

export function uploadFiles(writes: FileWrites, maxBytes: number, limit: RequestHandler): CollabRoute {
  return memberRoute<unknown, FolderQuery>({
    method: 'post',
    path: '/v1/uploads',
    summary: `Upload up to ${MAX_BATCH_FILES} files; each answers on its own`,
    description:
      'Parts named `files` (or `files[]`). Each file is written as by POST /v1/upload (without baseVersion: a file that ' +
      'exists is a conflict unless `replace=true`); the answer lists each file’s status with its result or error.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromQuery('workspace'),
    query: FolderQuery,
    before: [limit, announcedSizeGuard(maxBytes * MAX_BATCH_FILES)],
    bodyContent: uploadForm('files'),
    responses: {
      200: { description: 'Per file: 201 with the version, or the error', schema: BatchUploadResult },
      400: INVALID,
      403: FORBIDDEN_FOLDER,
      413: { description: 'A file over MAX_UPLOAD_MB', schema: ErrorBodyDto },
    },
    handler: async ({ query, req, res, user, workspace }) => {
      assertCanWrite(workspace, user, query.username);
      const { stored, form } = await receive(
        writes.files,
        maxBytes,
        ['files', 'files[]'],
        MAX_BATCH_FILES,
        workspace,
        query.username,
        req,
        res,
      );
      const items = await writes.writeBatch(user, workspace, query.username, stored, {
        baseVersion: form.baseVersion,
        replace: form.replace === 'true',
        message: form.message,
      });
      return { items };
    },
  });
}

export const listFiles = (files: SharedFilesService) =>
  memberRoute<unknown, FolderQuery>({
    method: 'get',
    path: '/v1/files',
    summary: 'A user’s files, each with its etag',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: FolderQuery,
    responses: { 200: { description: 'Files by name', schema: SharedFileList } },
    handler: ({ query, workspace }) => files.list(workspace, query.username),
  });

export const listAllFiles = (files: SharedFilesService) =>
  memberRoute<unknown, WorkspaceFilesQuery>({
    method: 'get',
    path: '/v1/files/all',
    summary: 'Every user’s files in the workspace',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: WorkspaceFilesQuery,
    responses: { 200: { description: 'Files by user and name', schema: SharedFileList } },
    handler: ({ workspace }) => files.list(workspace),
  });

const target = (workspace: WorkspaceScope, query: FileQuery): FilePath => ({
  workspace: workspace.name,
  username: query.username,
  filename: checkFilename(query.filename),
});

export const textPreview = (files: SharedFilesService) =>
  memberRoute<unknown, FileQuery>({
    method: 'get',
    path: '/v1/file',
    summary: 'A small text file’s content',
    description: 'UTF-8 text up to 1 MB; anything else answers 415 (download it through /v1/serve).',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: FileQuery,
    responses: {
      200: { description: 'The text', schema: TextPreview },
      404: NOT_FOUND,
      415: { description: 'Binary, or over 1 MB', schema: ErrorBodyDto },
    },
    handler: ({ query, workspace }) => files.preview(workspace, target(workspace, query), query.branch),
  });

export const fileMeta = (files: SharedFilesService) =>
  memberRoute<unknown, FileQuery>({
    method: 'get',
    path: '/v1/filemeta',
    summary: 'Size, content type, etag and sha256 of a file (and its lock)',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: FileQuery,
    responses: { 200: { description: 'The file', schema: FileMeta }, 404: NOT_FOUND },
    handler: ({ query, workspace }) => files.meta(workspace, target(workspace, query), query.branch),
  });

export const deleteFile = (trash: FileTrash) =>
  memberRoute<unknown, FileQuery>({
    method: 'delete',
    path: '/v1/file',
    summary: 'Move a file to the trash',
    description: 'Kept with its versions for TRASH_RETENTION_DAYS, then purged. Respects locks (423).',
    tags: TAGS,
    role: 'engineer',
    workspace: fromQuery('workspace'),
    query: FileQuery,
    responses: {
      200: { description: 'The trash key', schema: DeleteResult },
      403: FORBIDDEN_FOLDER,
      404: NOT_FOUND,
      423: LOCKED,
    },
    handler: ({ query, user, workspace }) => trash.remove(user, workspace, target(workspace, query)),
  });

export const listTrash = (trash: FileTrash) =>
  memberRoute<unknown, FolderQuery>({
    method: 'get',
    path: '/v1/trash',
    summary: 'A folder’s trash',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: FolderQuery,
    responses: { 200: { description: 'Trashed files, newest first', schema: TrashList } },
    handler: ({ query, workspace }) => trash.trash(workspace, query.username),
  });

export const restoreFile = (trash: FileTrash) =>
  memberRoute<RestoreRequest, RawQuery>({
    method: 'post',
    path: '/v1/trash/restore',
    summary: 'Restore a trashed file with its versions',
    description: '409 when a live file took the name meanwhile, unless `filename` gives another one.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromBody('workspace'),
    body: RestoreRequest,
    responses: {
      200: { description: 'The restored file', schema: FileMeta },
      403: FORBIDDEN_FOLDER,
      404: NOT_FOUND,
      409: { description: 'The name is taken', schema: ErrorBodyDto },
    },
    handler: ({ body, user, workspace }) =>
      trash.restore(user, workspace, body.username, body.key, body.filename),
  });

const SERVED = {
  200: binaryResponse('The whole file (also for several ranges, a malformed Range, or a stale If-Range)'),
  206: binaryResponse('One range'),
  304: { description: 'Unchanged (If-None-Match)' },
  404: NOT_FOUND,
  416: { description: 'The range starts past the end (Content-Range: bytes */size)', schema: ErrorBodyDto },
};

export function serve(files: SharedFilesService, cors: RequestHandler): CollabRoute[] {
  return (['get', 'head'] as const).map((method) =>
    memberRoute({
      method,
      path: '/v1/serve/:workspace/:username/:filename',
      summary: method === 'get' ? 'Serve a file with Range support' : 'The headers GET would send',
      description:
        'Range per DECISIONS.md 6; ETag and Last-Modified, 304 on If-None-Match; CORS for CORS_ORIGINS exposing ' +
        'Content-Range, Accept-Ranges and ETag.',
      tags: TAGS,
      role: 'viewer',
      workspace: fromParam('workspace'),
      cors,
      responses: SERVED,
      handler: ({ params, req, res, workspace }) =>
        serveFile(
          files,
          workspace,
          { workspace: workspace.name, username: params.username, filename: checkFilename(params.filename) },
          req,
          res,
        ),
    }),
  );
}

/** `publicBase`: where clients reach this host (PUBLIC_COLLAB_URL), never the request's Host. */
export const signedUrl = (signer: UrlSigner, publicBase: string) =>
  memberRoute<unknown, SignedUrlQuery>({
    method: 'get',
    path: '/signed-url',
    summary: 'A URL that serves one file without credentials until it expires',
    description:
      '`ttlMs` default 15 minutes, at most 7 days. The signature covers the method, the path and the expiry.',
    tags: TAGS,
    role: 'viewer',
    workspace: (req) => {
      const path = fromQuery('path')(req);
      return typeof path === 'string' ? /^\/v1\/serve\/([^/]+)\//.exec(path)?.[1]?.toLowerCase() : undefined;
    },
    query: SignedUrlQuery,
    responses: { 200: { description: 'The URL', schema: SignedUrl }, 400: INVALID },
    handler: ({ query, workspace }) => {
      const file = parseServePath(query.path);
      return signer.sign({ ...file, workspace: workspace.name }, query.ttlMs, publicBase);
    },
  });

export function serveSigned(
  files: SharedFilesService,
  signer: UrlSigner,
  cors: RequestHandler,
  scopeOf: (workspace: string) => Promise<WorkspaceScope | null>,
): CollabRoute[] {
  return (['get', 'head'] as const).map((method) =>
    openRoute<unknown, SignedServeQuery>({
      method,
      path: '/v1/serve-signed/:workspace/:username/:filename',
      summary: 'Serve a file through a signed URL (no credentials)',
      description:
        'A changed character in the path or signature: 403; past `expires`: 410. Then as /v1/serve.',
      tags: TAGS,
      query: SignedServeQuery,
      cors,
      responses: {
        ...SERVED,
        403: { description: 'The signature does not match', schema: ErrorBodyDto },
        410: { description: 'Expired', schema: ErrorBodyDto },
      },
      handler: async ({ params, query, req, res }) => {
        const file: FilePath = {
          workspace: params.workspace.toLowerCase(),
          username: params.username,
          filename: params.filename,
        };
        // The signature is checked before anything else is looked at (DECISIONS.md 6).
        signer.verify(file, query.expires, query.sig, query.kid);
        checkFilename(file.filename);
        const scope = await scopeOf(file.workspace);
        if (!scope) throw new AppError('not_found', 'No such file');
        await serveFile(files, scope, file, req, res);
      },
    }),
  );
}
