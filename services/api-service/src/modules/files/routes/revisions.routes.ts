import { FileRecord, FileRevision, FileRevisionList, PageQuery } from '@hwp/contracts';
import { type FileRouting, fileForbidden, fileNotFound } from './file-routing';

export const listRevisions = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'get',
    path: '/files/:file_id/revisions',
    summary: 'The revisions of the file, newest first, a page at a time',
    query: PageQuery,
    responses: {
      200: { description: 'The revisions (one page)', schema: FileRevisionList },
      404: fileNotFound,
    },
    handler: ({ params, query, user, tenant }) => {
      const userId = user.id;
      return files.revisions(tenant, userId, params.file_id, query);
    },
  });

export const getRevision = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'get',
    path: '/files/:file_id/revisions/:revision_id',
    summary: 'One revision',
    responses: { 200: { description: 'The revision', schema: FileRevision }, 404: fileNotFound },
    handler: ({ params, user, tenant }) => {
      const userId = user.id;
      return files.revision(tenant, userId, params.file_id, params.revision_id);
    },
  });

export const revertFile = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'post',
    path: '/files/:file_id/revert/:revision_id',
    summary: 'Make an earlier revision current again, as a new revision (history is kept)',
    status: 201,
    responses: {
      201: {
        description: 'The file record, its new current revision copying the old one',
        schema: FileRecord,
      },
      403: fileForbidden,
      404: fileNotFound,
    },
    handler: ({ params, user, tenant }) => {
      const userId = user.id;
      return files.revert(tenant, userId, params.file_id, params.revision_id);
    },
  });
