/**
 * The closed list of error codes both hosts answer with (DECISIONS.md section 0).
 * Add a code here, never inline in a service.
 */
export const ERROR_CODES = [
  'validation_failed',
  'unauthorized',
  'invalid_credentials',
  'token_expired',
  'forbidden',
  'not_found',
  'conflict',
  'version_conflict',
  'lock_held',
  'locked',
  'gone',
  'payload_too_large',
  'range_not_satisfiable',
  'unsupported_media_type',
  'method_not_allowed',
  'rate_limited',
  'otp_expired',
  'otp_invalid',
  'email_exists',
  'email_not_confirmed',
  'phone_exists',
  'phone_not_confirmed',
  'weak_password',
  'tenant_required',
  'unavailable',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** One field problem inside a `validation_failed` answer. */
export interface FieldError {
  field: string;
  message: string;
}

/** The error body of every failure on both hosts. Extra context fields may follow. */
export interface ErrorBody {
  detail: string;
  code: ErrorCode;
  path: string;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}
