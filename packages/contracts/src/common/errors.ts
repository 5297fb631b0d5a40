/**
 * The HTTP status of each error code: a code always answers with its own status, so a client can
 * branch on either and a throw site names only the code.
 */
export const ERROR_STATUS = {
  validation_failed: 400,
  unauthorized: 401,
  invalid_credentials: 400,
  token_expired: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  version_conflict: 409,
  lock_held: 423,
  locked: 423,
  gone: 410,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  unsupported_media_type: 415,
  method_not_allowed: 405,
  upgrade_required: 426,
  rate_limited: 429,
  otp_expired: 401,
  otp_invalid: 401,
  email_exists: 409,
  email_not_confirmed: 400,
  phone_exists: 409,
  phone_not_confirmed: 400,
  weak_password: 400,
  tenant_required: 400,
  unavailable: 503,
  internal: 500,
} as const;

/**
 * The closed list of error codes both hosts answer with (DECISIONS.md section 0).
 * Add a code to ERROR_STATUS, never inline in a service.
 */
export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as readonly ErrorCode[];

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
