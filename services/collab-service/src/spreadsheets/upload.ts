import { AppError } from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import multer from 'multer';

/** The process's import slots (IMPORT_CONCURRENCY), which every import shares. */
export interface ImportSlots {
  /** A slot, waiting up to IMPORT_QUEUE_WAIT_MS; null when none came free or `signal` aborted. Call it to free. */
  acquire(signal?: AbortSignal): Promise<(() => void) | null>;
}

const MB = 1024 * 1024;

/**
 * Waits (IMPORT_QUEUE_WAIT_MS) for one of the process's import slots, else answers 503; frees the
 * slot when the response ends. The body is not read while waiting.
 */
export function importSlot(imports: ImportSlots): RequestHandler {
  return async (_req, res, next) => {
    const gone = new AbortController();
    const onClose = () => gone.abort();
    res.on('close', onClose);
    const free = await imports.acquire(gone.signal);
    res.off('close', onClose);
    if (!free) {
      if (gone.signal.aborted) return; // the client left while waiting: nobody to answer
      next(
        new AppError('unavailable', 'Too many imports are running; try again in a few seconds', {
          retryable: true,
          headers: { 'Retry-After': '5' },
        }),
      );
      return;
    }
    // Freed by the handler once it is done, or when the response ends without it (refused earlier).
    res.locals.freeImportSlot = free;
    res.on('close', free);
    next();
  };
}

/** Reads the multipart body into memory: one `file` part up to `maxBytes`, a few small fields. */
export function spreadsheetUpload(maxBytes: number): RequestHandler {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 1024, parts: 12 },
  }).single('file');
  return (req, res, next) => {
    upload(req, res, (error: unknown) => {
      if ((error as { code?: string } | undefined)?.code === 'LIMIT_FILE_SIZE') {
        next(
          new AppError(
            'payload_too_large',
            `The file is larger than the import limit of ${Math.round(maxBytes / MB)} MB; split it into smaller files`,
          ),
        );
        return;
      }
      if (error && !(error instanceof multer.MulterError) && !(error instanceof AppError)) {
        // busboy's own parse errors (no boundary, a malformed part header, a truncated body).
        const detail = error instanceof Error ? error.message : String(error);
        next(new AppError('validation_failed', `Malformed multipart body: ${detail}`));
        return;
      }
      next(error);
    });
  };
}

export function theFile(req: Request): Express.Multer.File {
  if (req.file) return req.file;
  if (!req.is('multipart/form-data')) {
    throw new AppError(
      'unsupported_media_type',
      'Send the spreadsheet as multipart/form-data, in a part named "file"',
    );
  }
  throw new AppError('validation_failed', 'The form has no part named "file" holding the spreadsheet', {
    errors: [{ field: 'file', message: 'required' }],
  });
}

/** The text fields multer parsed from the form, still unchecked (validated once merged with the query). */
export function formFields(req: Request): Record<string, unknown> {
  const fields: unknown = req.body;
  return typeof fields === 'object' && fields !== null ? { ...fields } : {};
}
