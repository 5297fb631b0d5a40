// Presigned URLs of FsBlobStore: HMAC-signed method, key, expiry and (for parts) upload and part number.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { assertValidBlobKey } from './blob-validation';

export interface SignedFields {
  method: 'GET' | 'PUT';
  key: string;
  /** Epoch milliseconds. */
  expires: number;
  uploadId?: string;
  partNumber?: number;
  /** Set when the URL was presigned for a content type; the PUT must send exactly this Content-Type. */
  contentType?: string;
  /** Set when the URL was presigned for a size: the PUT must send exactly this many bytes. */
  contentLength?: number;
}

export type FsPresignedCheck =
  | ({ ok: true } & SignedFields)
  | {
      ok: false;
      /** not-presigned: no signature parameters, or a path outside the base path; someone else's request. */
      reason: 'not-presigned' | 'malformed' | 'bad-signature' | 'expired';
    };

export interface VerifyFsPresignedUrlOptions {
  signingKey: string;
  /** Only its path matters: the host is not signed, so URLs keep working behind proxies. */
  publicBaseUrl?: string;
  now?: number;
}

function signFields(signingKey: string, fields: SignedFields): string {
  // Keys cannot contain control characters, so newline-joined fields cannot be confused with one another.
  const canonical = [
    fields.method,
    fields.key,
    String(fields.expires),
    fields.uploadId ?? '',
    fields.partNumber === undefined ? '' : String(fields.partNumber),
    fields.contentType ?? '',
    // Appended only when set, so URLs presigned before sizes were signed stay valid.
    ...(fields.contentLength === undefined ? [] : [String(fields.contentLength)]),
  ].join('\n');
  return createHmac('sha256', signingKey).update(canonical).digest('hex');
}

/** The URL under `publicBaseUrl` that lets its bearer do `fields.method` on `fields.key` for `expiresIn` seconds. */
export function presignFsUrl(
  publicBaseUrl: string | undefined,
  signingKey: string,
  fields: Omit<SignedFields, 'expires'>,
  expiresIn: number,
): string {
  if (!publicBaseUrl) throw new Error('FsBlobStore needs publicBaseUrl to presign URLs');
  if (!(expiresIn > 0)) throw new RangeError(`expiresIn must be positive, got ${expiresIn}`);
  const expires = Date.now() + Math.round(expiresIn * 1000);
  const url = new URL(`${publicBaseUrl}/${fields.key.split('/').map(encodeURIComponent).join('/')}`);
  if (fields.uploadId !== undefined) url.searchParams.set('uploadId', fields.uploadId);
  if (fields.partNumber !== undefined) url.searchParams.set('partNumber', String(fields.partNumber));
  if (fields.contentType !== undefined) url.searchParams.set('contentType', fields.contentType);
  if (fields.contentLength !== undefined) url.searchParams.set('size', String(fields.contentLength));
  url.searchParams.set('expires', String(expires));
  url.searchParams.set('sig', signFields(signingKey, { ...fields, expires }));
  return url.toString();
}

/** Verifies a URL made by FsBlobStore's presign methods for a request with the given HTTP method. */
export function verifyFsPresignedUrl(
  url: string | URL,
  method: string,
  options: VerifyFsPresignedUrlOptions,
): FsPresignedCheck {
  const parsed = typeof url === 'string' ? new URL(url, 'http://presigned.invalid') : url;
  const basePath = options.publicBaseUrl ? new URL(options.publicBaseUrl).pathname.replace(/\/+$/, '') : '';
  const sig = parsed.searchParams.get('sig');
  const expiresText = parsed.searchParams.get('expires');
  if (sig === null || expiresText === null || !parsed.pathname.startsWith(`${basePath}/`)) {
    return { ok: false, reason: 'not-presigned' };
  }
  let key: string;
  try {
    key = parsed.pathname
      .slice(basePath.length + 1)
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .join('/');
    assertValidBlobKey(key);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const expires = Number(expiresText);
  const partNumberText = parsed.searchParams.get('partNumber');
  const partNumber = partNumberText === null ? undefined : Number(partNumberText);
  const uploadId = parsed.searchParams.get('uploadId') ?? undefined;
  if (!Number.isSafeInteger(expires) || (partNumber !== undefined && !Number.isInteger(partNumber))) {
    return { ok: false, reason: 'malformed' };
  }
  if ((uploadId === undefined) !== (partNumber === undefined)) return { ok: false, reason: 'malformed' };
  const upper = method.toUpperCase();
  const signedMethod = upper === 'HEAD' ? 'GET' : upper;
  if (signedMethod !== 'GET' && signedMethod !== 'PUT') return { ok: false, reason: 'bad-signature' };
  const fields: SignedFields = {
    method: signedMethod,
    key,
    expires,
    uploadId,
    partNumber,
    contentType: parsed.searchParams.get('contentType') ?? undefined,
  };
  const sizeText = parsed.searchParams.get('size');
  if (sizeText !== null) {
    const size = Number(sizeText);
    if (!Number.isSafeInteger(size) || size < 0) return { ok: false, reason: 'malformed' };
    fields.contentLength = size;
  }
  const expected = Buffer.from(signFields(options.signingKey, fields), 'hex');
  const given = Buffer.from(sig, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad-signature' };
  }
  // Checked after the signature, so a tampered expiry reports as tampering.
  if ((options.now ?? Date.now()) > expires) return { ok: false, reason: 'expired' };
  return { ok: true, ...fields };
}
