import { pipeline } from 'node:stream/promises';
import { ErrorBodyDto } from '@hwp/contracts';
import { AppError, type BlobStore, binaryResponse, parseRangeHeader } from '@hwp/platform';
import type { Request, Response } from 'express';
import type { OpenedFile } from './files.service';

/** Nothing the browser receives from a download may run in our origin (an uploaded SVG or HTML). */
const DOWNLOAD_CSP = "default-src 'none'; sandbox";

/** What a download route answers, besides its own 404 (OpenAPI). */
export const downloadResponses = {
  200: binaryResponse('The bytes'),
  206: binaryResponse('The requested range'),
  403: { description: 'Quarantined by processing', schema: ErrorBodyDto },
  409: {
    description: 'A virus scanner is configured and has not passed these bytes yet (Retry-After)',
    schema: ErrorBodyDto,
  },
  416: { description: 'The range starts past the end', schema: ErrorBodyDto },
};

/** How downloads are served: with `requireScan` (clamd configured), only bytes the scan passed. */
export interface Downloads {
  blobs: BlobStore;
  requireScan: boolean;
}

/**
 * Streams the current revision's bytes (or one `Range`) as an attachment. Quarantined files answer
 * 403; with a virus scanner configured, bytes it has not passed yet answer 409 (fail closed).
 * Several ranges, or a header that is not `bytes=a-b`, get the whole file (RFC 9110 allows it).
 */
export async function sendFile(
  downloads: Downloads,
  opened: OpenedFile,
  req: Request,
  res: Response,
): Promise<void> {
  const { blobs } = downloads;
  const { file, revision } = opened;
  if (revision.processingStatus === 'quarantined') {
    throw new AppError('forbidden', 'This file is quarantined: processing found it unsafe to hand out');
  }
  const scan = revision.stages.scan as { verdict?: string } | undefined;
  if (downloads.requireScan && scan?.verdict !== 'clean') {
    throw new AppError('conflict', 'The file has not passed the virus scan yet; try again shortly', {
      retryable: true,
      headers: { 'Retry-After': '5' },
    });
  }
  const header = req.get('range');
  const wanted = header === undefined ? null : parseRangeHeader(header, revision.size);
  if (wanted === 'unsatisfiable') {
    throw new AppError('range_not_satisfiable', `The file has ${revision.size} bytes`, {
      headers: { 'Content-Range': `bytes */${revision.size}` },
    });
  }
  const got = await blobs.get(revision.blobKey, wanted ?? undefined);
  res.attachment(file.name);
  res.set({
    'Content-Type': revision.mimeType,
    'Content-Length': String(got.size),
    'Accept-Ranges': 'bytes',
    ETag: `"${revision.sha256}"`,
    'Last-Modified': revision.createdAt.toUTCString(),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': DOWNLOAD_CSP,
    'Cache-Control': 'private, no-cache',
  });
  if (got.range) {
    res.status(206).set('Content-Range', `bytes ${got.range.start}-${got.range.end}/${got.totalSize}`);
  } else res.status(200);
  try {
    await pipeline(got.body, res);
  } catch {
    // The client went away mid-body; the status line is out, so dropping the connection is all that is left.
    res.destroy();
  }
}
