import {
  ErrorBodyDto,
  FileRecord,
  UploadCompleteRequest,
  UploadUrlRequest,
  UploadUrlResponse,
} from '@hwp/contracts';
import type { LargeUploads } from '../large-uploads';
import { type FileRouting } from './file-routing';

export const uploadUrl = ({ fileRoute }: FileRouting, uploads: LargeUploads) =>
  fileRoute({
    method: 'post',
    path: '/files/upload-url',
    summary: 'Start a large upload: a pre-signed URL for each part (S3 multipart)',
    description:
      'For files above about 100 MB (section 8). PUT each part (every part `part_size` bytes but the last) to its ' +
      'URL within an hour, keep the `ETag` header of each answer, then call `POST /files/upload-complete`. On the ' +
      'embedded default the URLs point at this host, on S3 at the bucket. `size` is at most MAX_UPLOAD_MB.',
    body: UploadUrlRequest,
    status: 201,
    responses: {
      201: { description: 'The upload and its part URLs', schema: UploadUrlResponse },
      413: { description: 'Larger than MAX_UPLOAD_MB', schema: ErrorBodyDto },
    },
    handler: ({ body, user, tenant }) => {
      const userId = user.id;
      return uploads.start(tenant, userId, body);
    },
  });

export const uploadComplete = ({ fileRoute }: FileRouting, uploads: LargeUploads) =>
  fileRoute({
    method: 'post',
    path: '/files/upload-complete',
    summary: 'Finish a large upload: assemble the parts and register the file (or a new revision)',
    body: UploadCompleteRequest,
    status: 201,
    responses: {
      201: { description: 'Stored', schema: FileRecord },
      400: {
        description: 'Parts missing, out of order or not adding up to the announced size',
        schema: ErrorBodyDto,
      },
      403: { description: 'The file exists and the caller may not edit it', schema: ErrorBodyDto },
      404: { description: 'No such upload of the caller in progress (or it expired)', schema: ErrorBodyDto },
      409: {
        description: 'A file of that name exists in the folder (no replace_if_exists)',
        schema: ErrorBodyDto,
      },
    },
    handler: ({ body, user, tenant }) => {
      const userId = user.id;
      return uploads.complete(tenant, userId, body);
    },
  });
