import type { ErrorCode } from '@hwp/contracts';
import type { AppError, ErrorShape } from '@hwp/platform';
import type { Request } from 'express';

/** The API version whose error body `{ code, message }` auth-js reads (header X-Supabase-Api-Version). */
export const GOTRUE_API_VERSION = '2024-01-01';

/** Our error codes as GoTrue names them; the rest map through `unauthorized()` or keep their name. */
const CODES: Partial<Record<ErrorCode, string>> = {
  otp_invalid: 'otp_expired',
  token_expired: 'bad_jwt',
  rate_limited: 'over_request_rate_limit',
  payload_too_large: 'request_too_large',
  unavailable: 'unexpected_failure',
  internal: 'unexpected_failure',
};

/**
 * A 401 in GoTrue's words: auth-js signs the user out on `session_not_found` and drops a stored
 * session on a refresh-token error.
 */
function unauthorized(error: AppError, req: Request): string {
  if (req.path.endsWith('/token')) {
    return /already used/i.test(error.detail) ? 'refresh_token_already_used' : 'refresh_token_not_found';
  }
  return req.get('authorization') ? 'session_not_found' : 'no_authorization';
}

/**
 * GoTrue's error body for everything under `/auth/v1`: `code` (the error code, API version
 * 2024-01-01) with `message`, and the legacy `error_code` / `msg` for older clients.
 */
export const gotrueError: ErrorShape = (error, req) => {
  const specific = error.extra?.gotrue;
  const code =
    typeof specific === 'string'
      ? specific
      : error.code === 'unauthorized'
        ? unauthorized(error, req)
        : (CODES[error.code] ?? error.code);
  return {
    headers: { 'X-Supabase-Api-Version': GOTRUE_API_VERSION },
    body: {
      code,
      message: error.detail,
      error_code: code,
      msg: error.detail,
      ...(code === 'weak_password' ? { weak_password: { reasons: ['length'] } } : {}),
      ...(error.errors ? { errors: error.errors } : {}),
    },
  };
};
