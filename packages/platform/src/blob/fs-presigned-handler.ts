import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ErrorCode } from '@hwp/contracts';
import {
  BlobNotFoundError,
  type ByteRange,
  InvalidBlobKeyError,
  MultipartUploadNotFoundError,
  RangeNotSatisfiableError,
} from './blob-store';
import type { FsBlobStore } from './fs-blob-store';

/** Resolves true when it answered the request, false when the request is not a presigned URL of this store. */
export type FsPresignedHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/**
 * Serves presigned URLs of an FsBlobStore: GET/HEAD (with single byte ranges), PUT of whole objects and
 * PUT of multipart parts. Mount it where publicBaseUrl points; it reads `req.originalUrl` when present
 * (express strips mount paths from `req.url`), else `req.url`.
 */
export function createFsPresignedHandler(store: FsBlobStore): FsPresignedHandler {
  return async (req, res) => {
    const rawUrl = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const method = (req.method ?? 'GET').toUpperCase();
    const check = store.verifyPresignedUrl(new URL(rawUrl, 'http://localhost'), method);
    if (!check.ok && check.reason === 'not-presigned') return false;
    try {
      if (method !== 'GET' && method !== 'HEAD' && method !== 'PUT') {
        res.setHeader('Allow', 'GET, HEAD, PUT');
        sendError(req, res, 405, 'method not allowed');
      } else if (!check.ok) {
        sendError(req, res, check.reason === 'malformed' ? 400 : 403, check.reason);
      } else if (check.method === 'GET') {
        await serveGet(store, check.key, req, res);
      } else if (
        check.contentLength !== undefined &&
        req.headers['content-length'] !== String(check.contentLength)
      ) {
        // As S3 does with a signed Content-Length: the part must be exactly the size it was issued for.
        req.resume();
        res.setHeader('Connection', 'close');
        sendError(req, res, 403, `this URL takes exactly ${check.contentLength} bytes (Content-Length)`);
      } else if (check.uploadId !== undefined && check.partNumber !== undefined) {
        const etag = await store.writeUploadPart(
          { uploadId: check.uploadId, key: check.key },
          check.partNumber,
          req,
        );
        res.writeHead(200, { ETag: `"${etag}"`, 'Content-Length': '0' }).end();
      } else {
        const sentType = req.headers['content-type'];
        if (check.contentType !== undefined && sentType !== check.contentType) {
          // S3 signs Content-Type as a header; requiring an exact match gives the same contract.
          sendError(req, res, 403, `Content-Type must be ${check.contentType}`);
        } else {
          const result = await store.put(check.key, req, { contentType: check.contentType ?? sentType });
          res.writeHead(200, { ETag: `"${result.sha256}"`, 'Content-Length': '0' }).end();
        }
      }
    } catch (error) {
      if (error instanceof BlobNotFoundError || error instanceof MultipartUploadNotFoundError) {
        sendError(req, res, 404, error.message);
      } else if (error instanceof InvalidBlobKeyError || error instanceof RangeError) {
        sendError(req, res, 400, error.message);
      } else if (error instanceof RangeNotSatisfiableError) {
        res.setHeader('Content-Range', `bytes */${error.size}`);
        sendError(req, res, 416, error.message);
      } else {
        sendError(req, res, 500, 'internal error');
      }
    }
    return true;
  };
}

/** The same handler as express-style middleware: unrelated requests go to `next`. */
export function createFsPresignedMiddleware(
  store: FsBlobStore,
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const handle = createFsPresignedHandler(store);
  return (req, res, next) => {
    handle(req, res).then(
      (handled) => {
        if (!handled) next();
      },
      (error: unknown) => next(error),
    );
  };
}

async function serveGet(
  store: FsBlobStore,
  key: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const head = await store.head(key);
  if (!head) throw new BlobNotFoundError(key);
  let range: ByteRange | undefined;
  if (req.headers.range !== undefined) {
    const parsed = parseRangeHeader(req.headers.range, head.size);
    if (parsed === 'unsatisfiable') throw new RangeNotSatisfiableError(key, head.size);
    range = parsed ?? undefined;
  }
  const result = await store.get(key, range);
  const headers: Record<string, string> = {
    'Content-Type': result.contentType,
    'Content-Length': String(result.size),
    'Accept-Ranges': 'bytes',
    'Last-Modified': head.lastModified.toUTCString(),
  };
  if (head.sha256) headers.ETag = `"${head.sha256}"`;
  if (result.range)
    headers['Content-Range'] = `bytes ${result.range.start}-${result.range.end}/${result.totalSize}`;
  res.writeHead(result.range ? 206 : 200, headers);
  if (req.method === 'HEAD') {
    result.body.destroy();
    res.end();
    return;
  }
  try {
    await pipeline(result.body, res);
  } catch {
    // The client went away mid-body; the status line is out, so dropping the connection is all that is left.
    res.destroy();
  }
}

/**
 * One `bytes=` range, including suffix ranges. Returns null for headers to ignore (multiple ranges, other
 * units, garbage), which RFC 9110 allows answering with the whole content.
 */
export function parseRangeHeader(header: string, size: number): ByteRange | 'unsatisfiable' | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, startText, endText] = match;
  if (startText === '') {
    if (endText === '') return null;
    const suffix = Number(endText);
    if (!Number.isSafeInteger(suffix)) return null;
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(startText);
  const end = endText === '' ? undefined : Number(endText);
  if (!Number.isSafeInteger(start) || (end !== undefined && (!Number.isSafeInteger(end) || end < start)))
    return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: end === undefined ? undefined : Math.min(end, size - 1) };
}

function sendError(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // The error body both hosts answer with (DECISIONS.md section 0).
  const code: ErrorCode =
    status === 403
      ? 'forbidden'
      : status === 404
        ? 'not_found'
        : status === 416
          ? 'range_not_satisfiable'
          : status >= 500
            ? 'internal'
            : 'validation_failed';
  const rawUrl = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const body = JSON.stringify({
    detail: message,
    code,
    path: rawUrl.split('?')[0],
    timestamp: new Date().toISOString(),
  });
  // An unread upload body would otherwise be left in the keep-alive connection.
  if (!req.complete) res.setHeader('Connection', 'close');
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}
