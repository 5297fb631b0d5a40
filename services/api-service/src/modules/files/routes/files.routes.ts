import { FileAccessToken, FileList, FilePermissions, FileRecord, ListFilesQuery } from '@hwp/contracts';
import type { FileAccessTokens } from '../file-access-tokens';
import { type FileRouting, fileForbidden, fileNotFound } from './file-routing';

export const listFiles = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'get',
    path: '/files',
    summary: 'Files of the tenant the caller may see: by folder, product, tags, or a search',
    description:
      '`q` searches names, descriptions, tags, the metadata processing read out and the text of text-like files ' +
      '(Postgres full text search, plus a substring match on the name). Newest change first.',
    query: ListFilesQuery,
    responses: { 200: { description: 'A page of file records', schema: FileList } },
    handler: ({ query, user, tenant }) => {
      const userId = user.id;
      return files.list(tenant, userId, query);
    },
  });

export const getFile = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'get',
    path: '/files/:file_id',
    summary: 'One file record',
    responses: { 200: { description: 'The file record', schema: FileRecord }, 404: fileNotFound },
    handler: ({ params, user, tenant }) => {
      const userId = user.id;
      return files.get(tenant, userId, params.file_id);
    },
  });

export const deleteFile = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'delete',
    path: '/files/:file_id',
    summary: 'Delete a file with its revisions and annotations (uploader, admins, or the delete list)',
    status: 204,
    responses: { 204: { description: 'Deleted' }, 403: fileForbidden, 404: fileNotFound },
    handler: async ({ params, res, user, tenant }) => {
      const userId = user.id;
      await files.remove(tenant, userId, params.file_id);
      res.status(204).end();
    },
  });

export const setPermissions = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'put',
    path: '/files/:file_id/permissions',
    summary: 'Replace who may view, edit and delete the file (uploader or tenant admin)',
    description:
      'Each list holds user ids or team (tenant) ids. The uploader and tenant admins/owners may always do ' +
      'everything. A non-empty list limits its action to whom it names (edit and delete include view); an empty ' +
      'list leaves it to roles: view and edit to every member of the tenant, delete to nobody else. Users of ' +
      'other tenants named here find the file under `GET /shared-with-me`.',
    body: FilePermissions,
    responses: {
      200: { description: 'The file record with its new permissions', schema: FileRecord },
      403: fileForbidden,
      404: fileNotFound,
    },
    handler: ({ body, params, user, tenant }) => {
      const userId = user.id;
      return files.setPermissions(tenant, userId, params.file_id, body);
    },
  });

export const accessToken = ({ fileRoute, files }: FileRouting, tokens: FileAccessTokens) =>
  fileRoute({
    method: 'get',
    path: '/files/:file_id/access-token',
    summary: 'A temporary token to download this file with `?token=` (read only, 15 minutes)',
    responses: {
      200: { description: 'The token and when it expires', schema: FileAccessToken },
      404: fileNotFound,
    },
    handler: async ({ params, req, user, tenant }) => {
      const userId = user.id;
      const { file } = await files.open(tenant, userId, params.file_id);
      return tokens.issue({ fileId: file.id, tenantId: tenant.id, userId, sessionId: req.user?.sessionId });
    },
  });
