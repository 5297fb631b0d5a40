import { ErrorBodyDto } from '@hwp/contracts';
import { clientKey, createRateLimiter, type Logger } from '@hwp/platform';
import type { Request } from 'express';
import type { DataSource } from 'typeorm';
import { fromBody, fromQuery, type RequestField } from '../../workspace-access/workspace-access';

export const TAGS = ['files'];

/** The workspace segment of a `<workspace>/<username>/<filename>` path. */
export function workspaceOfPath(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const first = value.replace(/^\/+/, '').split('/')[0];
  return first ? first.toLowerCase() : undefined;
}

/** Path routes name their workspace as the first segment of `path` (query or body). */
export const fromPath =
  (field = 'path'): RequestField =>
  (req) =>
    workspaceOfPath(fromQuery(field)(req) ?? fromBody(field)(req));

export const NOT_FOUND = {
  description: 'No such file (or version, branch, trash item) in the workspace',
  schema: ErrorBodyDto,
};
export const LOCKED = { description: 'Another user holds a valid lock on the path', schema: ErrorBodyDto };
export const FORBIDDEN_FOLDER = {
  description: 'Not the caller’s folder (managers and owners write any), or below the role',
  schema: ErrorBodyDto,
};
export const INVALID = {
  description: 'Invalid input, or a file name with .., /, NUL, control characters or over 255 bytes',
  schema: ErrorBodyDto,
};

/** `<name>` limit per workspace and client address (section 8). */
export function workspaceLimiter(
  deps: { dataSource: DataSource; logger: Logger },
  name: string,
  limit: number,
  workspace: RequestField,
  message: string,
) {
  return createRateLimiter(deps, {
    name,
    limit,
    windowMs: 60_000,
    key: (req: Request) => `${String(workspace(req) ?? '')}:${clientKey(req)}`,
    message,
  });
}
