import { ERROR_STATUS, type ErrorCode, type FieldError } from '@hwp/contracts';

export interface AppErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  errors?: FieldError[];
  /** Extra context fields merged into the error body (e.g. `currentEtag`). */
  extra?: Record<string, unknown>;
  /** Response headers to set (e.g. `Retry-After`). */
  headers?: Record<string, string>;
}

/** A failure the client should see as-is: the error middleware turns it into the error body. */
export class AppError extends Error {
  readonly retryable: boolean;
  readonly errors?: FieldError[];
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  /** The code's own status (`ERROR_STATUS` of the contracts): a throw site names only the code. */
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    detail: string,
    options: AppErrorOptions = {},
  ) {
    super(detail, { cause: options.cause });
    this.status = ERROR_STATUS[code];
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
    this.errors = options.errors;
    this.extra = options.extra;
    this.headers = options.headers;
  }

  get detail(): string {
    return this.message;
  }
}

export class ValidationError extends AppError {
  constructor(detail: string, errors?: FieldError[]) {
    super('validation_failed', detail, { errors });
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail = 'Authentication required') {
    super('unauthorized', detail);
  }
}

export class ForbiddenError extends AppError {
  constructor(detail = 'You do not have permission for this action') {
    super('forbidden', detail);
  }
}

export class NotFoundError extends AppError {
  constructor(detail = 'Not found') {
    super('not_found', detail);
  }
}

export class ConflictError extends AppError {
  constructor(detail: string, extra?: Record<string, unknown>) {
    super('conflict', detail, { extra });
  }
}

export class LockedError extends AppError {
  constructor(detail: string, extra?: Record<string, unknown>) {
    super('locked', detail, { extra });
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(detail = 'Request body is too large') {
    super('payload_too_large', detail);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(detail: string) {
    super('unsupported_media_type', detail);
  }
}

export class UnavailableError extends AppError {
  constructor(detail: string, options: AppErrorOptions = {}) {
    super('unavailable', detail, { retryable: true, ...options });
  }
}
