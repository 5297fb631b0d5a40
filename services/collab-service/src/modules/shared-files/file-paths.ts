import { ValidationError } from '@hwp/platform';

/** A file's address: `<workspace>/<username>/<filename>` (DECISIONS.md section 4). */
export interface FilePath {
  workspace: string;
  username: string;
  filename: string;
}

const MAX_FILENAME_BYTES = 255;
/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
function hasControl(text: string): boolean {
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) return true;
  }
  return false;
}

/**
 * A file name as given, or 400: no `/` or `\`, no `..` or `.`, no NUL or other control characters,
 * no leading or trailing spaces, at most 255 bytes of UTF-8. Names are never rewritten.
 */
export function checkFilename(filename: string, field = 'filename'): string {
  const refuse = (message: string) => new ValidationError(`${field} ${message}`, [{ field, message }]);
  if (typeof filename !== 'string' || filename.length === 0) throw refuse('is required');
  if (hasControl(filename)) throw refuse('must not hold control characters');
  if (/[/\\]/.test(filename)) throw refuse('must not hold / or \\ (folders are per user)');
  if (filename === '.' || filename === '..' || filename.includes('..')) throw refuse('must not hold ".."');
  if (filename.trim() !== filename) throw refuse('must not start or end with spaces');
  if (Buffer.byteLength(filename, 'utf8') > MAX_FILENAME_BYTES)
    throw refuse(`must be at most ${MAX_FILENAME_BYTES} bytes`);
  if (filename.includes('\ufffd')) throw refuse('must be valid UTF-8');
  return filename;
}

/** `workspace/username/filename` parsed (the filename is the rest, checked), or 400. */
export function parsePath(path: string, field = 'path'): FilePath {
  const match = /^([^/]+)\/([^/]+)\/(.+)$/.exec(typeof path === 'string' ? path.replace(/^\/+/, '') : '');
  if (!match) {
    throw new ValidationError(`${field} must be <workspace>/<username>/<filename>`, [
      { field, message: 'must be <workspace>/<username>/<filename>' },
    ]);
  }
  return { workspace: match[1].toLowerCase(), username: match[2], filename: checkFilename(match[3], field) };
}

export const pathOf = (p: FilePath) => `${p.workspace}/${p.username}/${p.filename}`;

/** The blob key of one version: under `<workspace>/<username>/<filename>/`, named by the version id. */
export const versionKey = (p: FilePath, versionId: string) =>
  `${p.workspace}/${p.username}/${p.filename}/${versionId}`;

/** `name.ext` -> [`name`, `.ext`] (a leading dot is part of the stem: `.env` has no extension). */
export function splitExtension(filename: string): [string, string] {
  const dot = filename.lastIndexOf('.');
  return dot > 0 ? [filename.slice(0, dot), filename.slice(dot)] : [filename, ''];
}

/** `<stem>_conflict_<username>_<yyyymmddThhmmss><.ext>` (DECISIONS.md 6), `_<n>` added when taken. */
export function conflictName(filename: string, username: string, at: Date, n = 1): string {
  const [stem, ext] = splitExtension(filename);
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');
  return `${stem}_conflict_${username}_${stamp}${n > 1 ? `_${n}` : ''}${ext}`;
}

/** `<stem>@<branch><.ext>`: a branch's file when branch writes use the suffix. */
export function branchFilename(base: string, branch: string): string {
  const [stem, ext] = splitExtension(base);
  return `${stem}@${branch}${ext}`;
}
