import {
  ErrorBodyDto,
  FileRecord,
  MAX_FILE_NAME_BYTES,
  MultipleUploadResult,
  UploadFileForm,
} from '@hwp/contracts';
import {
  announcedSizeGuard,
  type BlobStore,
  type StoredUpload,
  storedUploads,
  streamingUpload,
  toAppError,
  ValidationError,
  validateInput,
} from '@hwp/platform';
import type { Request } from 'express';
import { requestTenant } from '../../tenancy/tenant-context';
import { LARGE_FILES_HINT, revisionKey } from '../blob-upload';
import { type FileRouting } from './file-routing';

/** At most this many files in one `POST /files/multiple-upload` (DECISIONS.md section 3). */
export const MAX_FILES_PER_BATCH = 20;

const FORM_FIELDS = {
  product_id: { type: 'string', maxLength: 200 },
  folder_path: {
    type: 'string',
    maxLength: 1024,
    description: 'Virtual folder, e.g. `/chassis/brackets` (default `/`)',
  },
  description: { type: 'string', maxLength: 4000 },
  tags: {
    type: 'array',
    items: { type: 'string', maxLength: 100 },
    maxItems: 50,
    description: 'Repeated fields, or one field holding a comma separated list or a JSON array',
  },
  public: { type: 'boolean', default: false },
  replace_if_exists: {
    type: 'boolean',
    default: false,
    description: 'A file of the same name in the folder gets a new revision instead of a 409',
  },
};

const keyOf = (req: Request, id: string) => revisionKey(requestTenant(req).id, id);

/** The form's text fields, checked; on a refusal the stored parts are removed first. */
async function formOf(req: Request, blobs: BlobStore, uploads: StoredUpload[]): Promise<UploadFileForm> {
  try {
    const fields: unknown = req.body;
    return await validateInput(
      UploadFileForm,
      typeof fields === 'object' && fields ? { ...fields } : {},
      'body',
    );
  } catch (error) {
    await Promise.all(uploads.map((u) => blobs.delete(u.key).catch(() => undefined)));
    throw error;
  }
}

export const uploadFile = ({ fileRoute, files }: FileRouting, blobs: BlobStore, maxBytes: number) =>
  fileRoute({
    method: 'post',
    path: '/files/upload',
    summary: 'Upload one file (streamed to storage); the same name in the same folder is a new revision',
    description:
      'A multipart form with one part named `file` (at most MAX_UPLOAD_MB) and the fields below. The bytes stream ' +
      'to storage while their size and sha256 are computed; the record is written only once they are stored, and ' +
      `an upload cut off or refused leaves neither. Names: at most ${MAX_FILE_NAME_BYTES} bytes, no \`/\`, \`\\\`, ` +
      'control characters, `.` or `..` (Unicode is kept, normalised to NFC). Processing (scan, metadata, ' +
      'previews, index, classification) follows on the bus; `processing_status` tells where it is.',
    before: [
      announcedSizeGuard(maxBytes, LARGE_FILES_HINT),
      streamingUpload(blobs, keyOf, { fields: ['file'], maxFiles: 1, maxBytes, hint: LARGE_FILES_HINT }),
    ],
    bodyContent: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['file'],
          properties: { file: { type: 'string', format: 'binary' }, ...FORM_FIELDS },
        },
      },
    },
    status: 201,
    responses: {
      201: { description: 'Stored (a new file, or a new revision of it)', schema: FileRecord },
      400: {
        description: 'No `file` part, a refused name or field, or a malformed form',
        schema: ErrorBodyDto,
      },
      403: { description: 'The file exists and the caller may not edit it', schema: ErrorBodyDto },
      409: {
        description: 'A file of that name exists in the folder (no replace_if_exists)',
        schema: ErrorBodyDto,
      },
      413: { description: 'Larger than MAX_UPLOAD_MB', schema: ErrorBodyDto },
      415: { description: 'Not multipart/form-data', schema: ErrorBodyDto },
    },
    handler: async ({ req, user, tenant }) => {
      const uploads = storedUploads(req);
      const form = await formOf(req, blobs, uploads);
      const [stored] = uploads;
      if (!stored) {
        throw new ValidationError('The form has no part named "file"', [
          { field: 'file', message: 'required' },
        ]);
      }
      const userId = user.id;
      return files.register(tenant, userId, stored, form);
    },
  });

export const uploadFiles = ({ fileRoute, files }: FileRouting, blobs: BlobStore, maxBytes: number) =>
  fileRoute({
    method: 'post',
    path: '/files/multiple-upload',
    summary: `Upload up to ${MAX_FILES_PER_BATCH} files; each is stored or refused on its own`,
    description:
      'Repeated `files` parts (each at most MAX_UPLOAD_MB) with the fields of `POST /files/upload` applied to all. ' +
      "The answer lists, in form order, each file's record (status 201) or why it was refused (its status, " +
      'code and message); one refusal does not undo the others.',
    before: [
      announcedSizeGuard(maxBytes * MAX_FILES_PER_BATCH, LARGE_FILES_HINT),
      streamingUpload(blobs, keyOf, {
        fields: ['files'],
        maxFiles: MAX_FILES_PER_BATCH,
        maxBytes,
        hint: LARGE_FILES_HINT,
      }),
    ],
    bodyContent: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['files'],
          properties: {
            files: {
              type: 'array',
              maxItems: MAX_FILES_PER_BATCH,
              items: { type: 'string', format: 'binary' },
            },
            ...FORM_FIELDS,
          },
        },
      },
    },
    responses: {
      200: { description: 'One entry per file part', schema: MultipleUploadResult },
      400: { description: 'No `files` part, more than 20, or a refused field', schema: ErrorBodyDto },
      413: { description: 'A file larger than MAX_UPLOAD_MB', schema: ErrorBodyDto },
      415: { description: 'Not multipart/form-data', schema: ErrorBodyDto },
    },
    handler: async ({ req, user, tenant }) => {
      const uploads = storedUploads(req);
      const form = await formOf(req, blobs, uploads);
      if (uploads.length === 0) {
        throw new ValidationError('The form has no part named "files"', [
          { field: 'files', message: 'required' },
        ]);
      }
      const userId = user.id;
      const items = [];
      for (const [index, stored] of uploads.entries()) {
        try {
          items.push({
            name: stored.originalName,
            status: 201,
            file: await files.register(tenant, userId, stored, form),
          });
        } catch (error) {
          const refused = toAppError(error);
          if (refused.status >= 500) {
            // Not the file's fault: the parts not yet registered go too, so nothing is left orphaned.
            await Promise.all(
              uploads.slice(index + 1).map((u) => blobs.delete(u.key).catch(() => undefined)),
            );
            throw error;
          }
          items.push({
            name: stored.originalName,
            status: refused.status,
            code: refused.code,
            error: refused.message,
          });
        }
      }
      return { items };
    },
  });
