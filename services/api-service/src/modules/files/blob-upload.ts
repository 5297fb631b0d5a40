import { tooLarge as platformTooLarge } from '@hwp/platform';

/** How the upload routes' 413 points at the large-file flow. */
export const LARGE_FILES_HINT = '; use POST /files/upload-url for large files';

/** The key of a revision's bytes: under the tenant's prefix, named by ids only (never by user input). */
export function revisionKey(tenantId: string, revisionId: string): string {
  return `tenants/${tenantId}/files/${revisionId}`;
}

export const tooLarge = (maxBytes: number) => platformTooLarge(maxBytes, LARGE_FILES_HINT);
