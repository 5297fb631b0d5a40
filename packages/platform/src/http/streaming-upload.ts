import type { Readable } from 'node:stream';
import type { Request, RequestHandler, Response } from 'express';
import multer, { type StorageEngine } from 'multer';
import type { BlobStore } from '../blob';
import { AppError } from '../errors';
import { newId } from '../ids';

const MB = 1024 * 1024;
/** Room for the form's text fields and part headers on top of the files themselves. */
const FORM_OVERHEAD = MB;

/** What the engine stored for one file part; the route turns it into a record. */
export interface StoredUpload {
  /** A new id for what the upload becomes (a revision, a version), also in its key. */
  id: string;
  key: string;
  size: number;
  sha256: string;
  originalName: string;
  clientType: string;
  /** The form field the part came in. */
  field: string;
}

/**
 * Where a part's bytes go, given the new id and the part's file name (check it before using it in a
 * key); throwing refuses the part (and so the form) before any byte is stored.
 */
export type UploadKey = (req: Request, id: string, originalName: string) => string;

/**
 * A multer storage engine that streams each file part straight into the blob store (size and
 * sha256 computed on the way): nothing is buffered in memory or spooled to disk. A part that fails
 * or is cut off has its object removed; multer removes the stored ones when the form fails later.
 */
export function blobStorage(blobs: BlobStore, keyOf: UploadKey): StorageEngine {
  return {
    _handleFile(req, file, callback) {
      const id = newId();
      let key: string;
      try {
        key = keyOf(req, id, file.originalname);
      } catch (error) {
        file.stream.resume();
        callback(error as Error);
        return;
      }
      blobs.put(key, file.stream as Readable, { contentType: 'application/octet-stream' }).then(
        (stored) => {
          const upload: StoredUpload = {
            id,
            key,
            size: stored.size,
            sha256: stored.sha256,
            originalName: file.originalname,
            clientType: file.mimetype,
            field: file.fieldname,
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

export function tooLarge(maxBytes: number, hint = ''): AppError {
  return new AppError(
    'payload_too_large',
    `The file is larger than the upload limit of ${Math.round(maxBytes / MB)} MB${hint}`,
  );
}

/** Refuses a body announced larger than the limit before reading any of it (413). */
export function announcedSizeGuard(maxBytes: number, hint = ''): RequestHandler {
  return (req, _res, next) => {
    const announced = Number(req.get('content-length'));
    if (Number.isFinite(announced) && announced > maxBytes + FORM_OVERHEAD) {
      // The client may still be sending: close the connection after the answer.
      req.headers.connection = 'close';
      next(tooLarge(maxBytes, hint));
      return;
    }
    next();
  };
}

/** Streams the form's file parts (`fields`, at most `maxFiles` in all) to the blob store. */
export function streamingUpload(
  blobs: BlobStore,
  keyOf: UploadKey,
  options: { fields: string[]; maxFiles: number; maxBytes: number; hint?: string },
): RequestHandler {
  const upload = multer({
    storage: blobStorage(blobs, keyOf),
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
  }).fields(options.fields.map((name) => ({ name, maxCount: options.maxFiles })));
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) {
      next(
        new AppError(
          'unsupported_media_type',
          `Send the file as multipart/form-data, in a part named "${options.fields[0]}"`,
        ),
      );
      return;
    }
    upload(req, res, (error: unknown) => {
      const code = (error as { code?: string } | undefined)?.code;
      if (code === 'LIMIT_FILE_SIZE') next(tooLarge(options.maxBytes, options.hint));
      else next(error);
    });
  };
}

/** Runs a middleware (multer) inside a handler, as a promise. */
export function runMiddleware(middleware: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    middleware(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
  });
}

/** The file parts the engine stored for this request, in form order. */
export function storedUploads(req: Request): StoredUpload[] {
  const files = req.files as unknown as Record<string, StoredUpload[]> | StoredUpload[] | undefined;
  if (!files) return [];
  return Array.isArray(files) ? files : Object.values(files).flat();
}
