import { createHmac, timingSafeEqual } from 'node:crypto';
import { finished, type Readable } from 'node:stream';
import { SIGNED_URL_MAX_TTL_MS, type SignedUrl } from '@hwp/contracts';
import {
  AppError,
  type BlobStore,
  ForbiddenError,
  NotFoundError,
  parseRangeHeader,
  ValidationError,
} from '@hwp/platform';
import cors from 'cors';
import type { Request, RequestHandler, Response } from 'express';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { checkFilename, type FilePath, pathOf } from './file-paths';
import type { SharedFilesService } from './shared-files.service';

/** Nothing served may run in our origin (an uploaded SVG or HTML). */
const SERVE_CSP = "default-src 'none'; sandbox";
const DEFAULT_SIGNED_TTL_MS = 15 * 60 * 1000;

/**
 * CORS of the routes that serve bytes (GET/HEAD with ranges) to the configured origins (`*`: any), for
 * their answers and their preflight (OPTIONS: 204; the routes declare it as their `cors`).
 */
export function servingCors(origins: string[]): RequestHandler {
  return cors({
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD'],
    allowedHeaders: ['Range', 'If-Range', 'If-None-Match', 'Authorization'],
    exposedHeaders: ['Content-Range', 'Accept-Ranges', 'ETag', 'Content-Length', 'Last-Modified'],
    maxAge: 600,
  });
}

/** `/v1/serve/<workspace>/<username>/<filename>` with each segment percent-encoded: what a signature covers. */
export function servePath(p: FilePath): string {
  return `/v1/serve/${[p.workspace, p.username, p.filename].map(encodeURIComponent).join('/')}`;
}

/** The file a `/v1/serve/...` path names (segments percent-decoded), or 400. */
export function parseServePath(path: string): FilePath {
  const match = /^\/v1\/serve\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)$/.exec(path);
  if (!match) {
    throw new ValidationError('path must be /v1/serve/<workspace>/<username>/<filename>', [
      { field: 'path', message: 'not a /v1/serve/ path' },
    ]);
  }
  try {
    const [workspace, username, filename] = match.slice(1).map((s) => decodeURIComponent(s));
    return { workspace: workspace.toLowerCase(), username, filename: checkFilename(filename, 'path') };
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ValidationError('path is not percent-encoded correctly', [
      { field: 'path', message: 'bad encoding' },
    ]);
  }
}

/** Signing keys by id: the first signs, all verify (rotation: add a new key first, drop the old later). */
export class UrlSigner {
  constructor(private readonly keys: [kid: string, secret: string][]) {
    if (keys.length === 0) throw new Error('UrlSigner needs a key');
  }

  private mac(secret: string, path: string, expires: number): Buffer {
    return createHmac('sha256', secret).update(`GET\n${path}\n${expires}`).digest();
  }

  sign(target: FilePath, ttlMs: number | undefined, base: string): SignedUrl {
    return this.signPath(servePath(target), ttlMs, base, (path) =>
      path.replace(/^\/v1\/serve\//, '/v1/serve-signed/'),
    );
  }

  /**
   * A URL of `path` that works without a session until it expires: `expires`, `kid` and `sig` of
   * `GET\n<path>\n<expires>`; `servedAt` maps the signed path to where it is served (default itself).
   */
  signPath(
    path: string,
    ttlMs: number | undefined,
    base: string,
    servedAt: (path: string) => string = (p) => p,
  ): SignedUrl {
    const ttl = Math.min(ttlMs ?? DEFAULT_SIGNED_TTL_MS, SIGNED_URL_MAX_TTL_MS);
    const expires = Date.now() + ttl;
    const [kid, secret] = this.keys[0];
    const sig = this.mac(secret, path, expires).toString('base64url');
    return {
      url: `${base}${servedAt(path)}?expires=${expires}&kid=${encodeURIComponent(kid)}&sig=${sig}`,
      expiresAt: new Date(expires).toISOString(),
    };
  }

  verify(target: FilePath, expires: string, sig: string, kid?: string): void {
    this.verifyPath(servePath(target), expires, sig, kid);
  }

  /** The signature first (length, then constant time: 403), then the expiry (410). */
  verifyPath(path: string, expires: string, sig: string, kid?: string): void {
    const key = kid === undefined ? this.keys[0] : this.keys.find(([id]) => id === kid);
    const refused = new ForbiddenError('The signature does not match this URL');
    if (!key) throw refused;
    const expected = this.mac(key[1], path, Number(expires));
    const given = Buffer.from(sig, 'base64url');
    if (
      given.length !== expected.length ||
      given.toString('base64url') !== sig ||
      !timingSafeEqual(given, expected)
    )
      throw refused;
    if (Number(expires) <= Date.now()) throw new AppError('gone', 'This signed URL has expired');
  }
}

/** Whether `If-Range` allows the range: the current strong ETag, or a date not before Last-Modified. */
function ifRangeHolds(ifRange: string | undefined, etag: string, modified: Date): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = Date.parse(value);
  return Number.isFinite(date) && Math.floor(modified.getTime() / 1000) * 1000 <= date;
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * Range-enabled serving (DECISIONS.md 6): one range 206; several ranges or a malformed header 200 with
 * the whole body; unsatisfiable 416 with a `Content-Range` of `bytes *` and the size; `If-Range` with a stale
 * validator 200 whole; `If-None-Match` 304; HEAD the headers GET would send.
 */
export async function serveFile(
  files: SharedFilesService,
  access: WorkspaceScope,
  target: FilePath,
  req: Request,
  res: Response,
): Promise<void> {
  const head = await files.servedHead(access, target.username, target.filename);
  if (!head) throw new NotFoundError(`No file ${pathOf(target)}`);
  await serveBlob(
    files.blobs,
    {
      key: head.blob_key,
      size: Number(head.size),
      sha256: head.sha256,
      modified: head.created_at,
      contentType: head.content_type,
      filename: target.filename,
    },
    req,
    res,
  );
}

/** The Content-Type header express's `res.type` makes of each stored type (a charset for text types). */
const contentTypeHeaders = new Map<string, string>();
const CONTENT_TYPES_KEPT = 256;

/** `res.type(type)`, its header value remembered per type: express parses the type on every call. */
function setContentType(res: Response, type: string): void {
  const known = contentTypeHeaders.get(type);
  if (known !== undefined) {
    res.setHeader('Content-Type', known);
    return;
  }
  res.type(type);
  const made = res.getHeader('Content-Type');
  if (typeof made === 'string' && contentTypeHeaders.size < CONTENT_TYPES_KEPT)
    contentTypeHeaders.set(type, made);
}

/** One stored object as a download with Range, validators and the sandboxing CSP (see serveFile). */
export async function serveBlob(
  blobs: BlobStore,
  blob: { key: string; size: number; sha256: string; modified: Date; contentType: string; filename: string },
  req: Request,
  res: Response,
): Promise<void> {
  const { size } = blob;
  const etag = `"${blob.sha256}"`;
  // Plain setHeader: these values need none of express's res.set conversions (this runs per read).
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', blob.modified.toUTCString());
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', SERVE_CSP);
  if (etagMatches(req.get('if-none-match'), etag)) {
    res.status(304).end();
    return;
  }
  const header = req.get('range');
  const wanted =
    header !== undefined && ifRangeHolds(req.get('if-range'), etag, blob.modified)
      ? parseRangeHeader(header, size)
      : null;
  if (wanted === 'unsatisfiable') {
    throw new AppError('range_not_satisfiable', `The file has ${size} bytes`, {
      headers: { 'Content-Range': `bytes */${size}` },
    });
  }
  setContentType(res, blob.contentType);
  res.setHeader('Content-Disposition', `inline; filename*=UTF-8''${encodeURIComponent(blob.filename)}`);
  if (wanted) {
    const end = wanted.end ?? size - 1;
    res.status(206);
    res.setHeader('Content-Range', `bytes ${wanted.start}-${end}/${size}`);
    res.setHeader('Content-Length', String(end - wanted.start + 1));
  } else {
    res.status(200);
    res.setHeader('Content-Length', String(size));
  }
  if (req.method === 'HEAD' || size === 0) {
    res.end();
    return;
  }
  // The type and size come from the row: the bytes alone are read. Served keys are versioned (a
  // file version, a translation's model): their bytes never change, so the store may keep them open.
  const got = await blobs.read(blob.key, wanted ?? undefined, { immutable: true });
  await sendBody(got.body, res);
}

/**
 * Pipes `body` into the response until either ends: a failing read cuts the response off (the
 * client sees a short body, not a second status), a client gone stops the read. Not
 * `stream.pipeline`: it makes an AbortSignal and a DOMException for every read served.
 */
export function sendBody(body: Readable, res: Response): Promise<void> {
  return new Promise<void>((resolve) => {
    body.once('error', () => res.destroy());
    // Sent whole, failed, or the client left: also when it left while the body was being opened
    // (a `close` already emitted does not come again; `finished` knows).
    finished(res, () => {
      body.destroy();
      resolve();
    });
    body.pipe(res);
  });
}
