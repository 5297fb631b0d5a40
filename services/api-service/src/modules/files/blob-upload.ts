import type { Readable } from 'node:stream';
import { AppError, type BlobStore, newId } from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import multer, { type StorageEngine } from 'multer';

const MB = 1024 * 1024;
/** Room for the form's text fields and part headers on top of the files themselves. */
const FORM_OVERHEAD = MB;

/** What the engine stored for one file part; the handler turns it into a revision. */
export interface StoredUpload {
  revisionId: string;
  key: string;
  size: number;
  sha256: string;
  originalName: string;
  clientType: string;
}

/** The key of a revision's bytes: under the tenant's prefix, named by ids only (never by user input). */
export function revisionKey(tenantId: string, revisionId: string): string {
  return `tenants/${tenantId}/files/${revisionId}`;
}

/**
 * A multer storage engine that streams each file part straight into the blob store (size and
 * sha256 computed on the way): nothing is buffered in memory or spooled to disk. A part that fails
 * or is cut off has its object removed; multer removes the stored ones when the form fails later.
 */
export function blobStorage(blobs: BlobStore, tenantOf: (req: Request) => string): StorageEngine {
  return {
    _handleFile(req, file, callback) {
      const revisionId = newId();
      const key = revisionKey(tenantOf(req), revisionId);
      blobs.put(key, file.stream as Readable, { contentType: 'application/octet-stream' }).then(
        (stored) => {
          // busboy truncates at the size limit and multer then fails the form: remove it then.
          const upload: StoredUpload = {
            revisionId,
            key,
            size: stored.size,
            sha256: stored.sha256,
            originalName: file.originalname,
            clientType: file.mimetype,
          };
          callback(null, upload as unknown as Partial<Express.Multer.File>);
        },
        (error: unknown) => {
          blobs.delete(key).then(
            () => callback(error as Error),
            () => callback(error as Error),
          );
        },
      );
    },
    _removeFile(_req, file, callback) {
      const key = (file as unknown as Partial<StoredUpload>).key;
      if (!key) return callback(null);
      blobs.delete(key).then(
        () => callback(null),
        (error: unknown) => callback(error as Error),
      );
    },
  };
}

/** Refuses a body announced larger than the limit before reading any of it (413). */
export function announcedSizeGuard(maxBytes: number): RequestHandler {
  return (req, _res, next) => {
    const announced = Number(req.get('content-length'));
    if (Number.isFinite(announced) && announced > maxBytes + FORM_OVERHEAD) {
      // The client may still be sending: close the connection after the answer.
      req.headers.connection = 'close';
      next(tooLarge(maxBytes));
      return;
    }
    next();
  };
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError(
    'payload_too_large',
    413,
    `The file is larger than the upload limit of ${Math.round(maxBytes / MB)} MB; use POST /files/upload-url for large files`,
  );
}

/** Streams the form's file parts (`field`, at most `maxFiles`) to the blob store. */
export function streamingUpload(
  blobs: BlobStore,
  tenantOf: (req: Request) => string,
  options: { field: string; maxFiles: number; maxBytes: number },
): RequestHandler {
  const upload = multer({
    storage: blobStorage(blobs, tenantOf),
    // The name as sent (busboy would cut `../x` down to `x`): a path in a name is refused, not guessed at.
    preservePath: true,
    // Browsers send the filename parameter as raw UTF-8 (the HTML form rules), not latin1.
    defParamCharset: 'utf8',
    limits: {
      fileSize: options.maxBytes,
      files: options.maxFiles,
      fields: 20,
      fieldSize: 16 * 1024,
      parts: 60,
    },
  }).array(options.field, options.maxFiles);
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) {
      next(
        new AppError(
          'unsupported_media_type',
          415,
          `Send the file as multipart/form-data, in a part named "${options.field}"`,
        ),
      );
      return;
    }
    upload(req, res, (error: unknown) => {
      if ((error as { code?: string } | undefined)?.code === 'LIMIT_FILE_SIZE')
        next(tooLarge(options.maxBytes));
      else next(error);
    });
  };
}

/** The file parts the engine stored for this request. */
export function storedUploads(req: Request): StoredUpload[] {
  const files = (req.files ?? []) as unknown as StoredUpload[];
  return Array.isArray(files) ? files : [];
}
