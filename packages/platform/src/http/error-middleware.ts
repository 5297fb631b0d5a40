import type { ErrorBody, ErrorCode } from '@hwp/contracts';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/unavailable';
import { AppError, NotFoundError, UnavailableError } from '../errors';

/** Client statuses libraries raise (body-parser, send, ...) and the code that answers with each. */
const LIBRARY_STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
  429: 'rate_limited',
};

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  code?: string;
  expose?: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Postgres and socket errors that mean "try again later", not "bug". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P03',
  '53300',
]);

/** Retry-After of a 503 for an unreachable database: a restart takes a few seconds. */
const DATABASE_RETRY_AFTER_S = 2;

/**
 * Maps any thrown value to an AppError. Known library failures (body-parser, multer, pg) get
 * their 4xx/503 meaning; anything else is a bug and becomes a 500 whose detail is generic.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (!isObject(error)) return new AppError('internal', 'Internal server error', { cause: error });
  const e = error as HttpishError;
  // body-parser (express.json)
  if (e.type === 'entity.parse.failed') return new AppError('validation_failed', 'Malformed JSON body');
  if (e.type === 'entity.too.large') return new AppError('payload_too_large', 'Request body is too large');
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
    return new AppError('unsupported_media_type', 'Unsupported body encoding or charset');
  }
  if (e.type === 'request.aborted') return new AppError('validation_failed', 'Request aborted by the client');
  // multer
  if (e.code === 'LIMIT_FILE_SIZE' || e.code === 'LIMIT_FIELD_VALUE') {
    return new AppError('payload_too_large', 'Uploaded file is too large');
  }
  if (
    e.code === 'LIMIT_FILE_COUNT' ||
    e.code === 'LIMIT_PART_COUNT' ||
    e.code === 'LIMIT_UNEXPECTED_FILE' ||
    e.code === 'LIMIT_FIELD_COUNT' ||
    e.code === 'LIMIT_FIELD_KEY' ||
    e.code === 'MISSING_FIELD_NAME'
  ) {
    return new AppError(
      'validation_failed',
      `Upload rejected: ${String((error as { message?: unknown }).message)}`,
    );
  }
  // multer hands busboy's parse errors (truncated body, no boundary, a malformed part header) on
  // with the list of cleaned-up files attached: the client sent a broken form.
  if (!e.code && Array.isArray((error as { storageErrors?: unknown }).storageErrors)) {
    return new AppError(
      'validation_failed',
      `Malformed multipart body: ${String((error as { message?: unknown }).message)}`,
    );
  }
  // busboy refuses to start on a form without a boundary or with a broken Content-Type, before
  // multer has anything to clean up (no storageErrors): still the client's broken form.
  const message = String((error as { message?: unknown }).message ?? '');
  if (
    !e.code &&
    /^(Multipart: Boundary not found|Malformed content type|Unsupported content type|Missing Content-Type)/.test(
      message,
    )
  ) {
    return new AppError('validation_failed', `Malformed multipart body: ${message}`);
  }
  // pg-pool: every pooled connection stayed busy past connectionTimeoutMillis (or connecting timed
  // out): the database is saturated or unreachable, not the request at fault.
  if (
    !e.code &&
    /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)/.test(message)
  ) {
    return new AppError('unavailable', 'The database is busy; retry shortly', {
      retryable: true,
      headers: { 'Retry-After': '2' },
    });
  }
  // pg: the database is down, restarting or out of connections, or the connection broke mid-request
  // (57P01 of a fast shutdown, "Connection terminated unexpectedly" of an immediate one, a refused
  // connect). The pool has dropped the broken connection; the same request may simply be sent again.
  if (isDatabaseUnavailable(error)) {
    return new UnavailableError('The database is unavailable; retry after Retry-After seconds', {
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
    });
  }
  // pg
  if (e.code === '23505') return new AppError('conflict', 'A record with the same unique key already exists');
  if (e.code === '23503')
    return new AppError('conflict', 'A referenced record does not exist or is still in use');
  // 23514: a CHECK constraint; class 22 (data exception): a value the database cannot take as sent
  // (NUL in text, bad number or date, string too long, malformed JSON path), i.e. the client's input.
  if (e.code === '23514' || e.code?.startsWith('22')) {
    return new AppError('validation_failed', 'A value was rejected by the database');
  }
  if (e.code === '40001' || e.code === '40P01') {
    return new AppError('unavailable', 'Concurrent update, retry the request', {
      retryable: true,
      headers: { 'Retry-After': '1' },
    });
  }
  if (e.code && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) {
    return new AppError('unavailable', 'A backing service is unavailable', {
      retryable: true,
      headers: { 'Retry-After': '5' },
    });
  }
  // Other http-errors style errors with a client status the library chose to expose.
  const status = e.status ?? e.statusCode;
  if (status && status >= 400 && status < 500 && e.expose) {
    // The code that answers with the library's status; any other 4xx is a 400 validation_failed.
    const code: ErrorCode = LIBRARY_STATUS_CODES[status] ?? 'validation_failed';
    return new AppError(code, String((error as { message?: unknown }).message));
  }
  return new AppError('internal', 'Internal server error', { cause: error });
}

export function errorBody(error: AppError, path: string): ErrorBody {
  return {
    ...(error.extra ?? {}),
    detail: error.detail,
    code: error.code,
    path,
    timestamp: new Date().toISOString(),
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

/** Another error body for the routes under a path prefix (a compatibility surface). */
export type ErrorShape = (
  error: AppError,
  req: Request,
) => { body: unknown; headers?: Record<string, string> };

const errorShapes = new WeakMap<object, { prefix: string; shape: ErrorShape }[]>();

/**
 * Errors of requests under `prefix` (every failure: validation, 404, limits, malformed JSON) are
 * written by `shape` instead of as the error body.
 */
export function shapeErrorsUnder(app: Express, prefix: string, shape: ErrorShape): void {
  const list = errorShapes.get(app) ?? [];
  list.push({ prefix: prefix.replace(/\/$/, ''), shape });
  errorShapes.set(app, list);
}

function shapeOf(req: Request): ErrorShape | undefined {
  const path = req.originalUrl.split('?')[0];
  return errorShapes.get(req.app)?.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`))
    ?.shape;
}

/** Writes an AppError as the error body; used by the error middleware and by early middlewares. */
export function sendError(req: Request, res: Response, error: AppError): void {
  if (error.headers) for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  // RFC 6750: a 401 names the scheme; a bearer token that was sent and refused is an invalid_token.
  if (error.status === 401 && !res.hasHeader('WWW-Authenticate')) {
    const sentBearer = /^bearer\s/i.test(req.headers.authorization ?? '');
    res.setHeader('WWW-Authenticate', sentBearer ? 'Bearer error="invalid_token"' : 'Bearer');
  }
  const shape = shapeOf(req);
  if (shape) {
    const shaped = shape(error, req);
    for (const [name, value] of Object.entries(shaped.headers ?? {})) res.setHeader(name, value);
    res.status(error.status).json(shaped.body);
    return;
  }
  res.status(error.status).json(errorBody(error, req.originalUrl.split('?')[0]));
}

/** The one error middleware of a service. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    const appError = toAppError(error);
    if (appError.status >= 500 && appError.code === 'internal') {
      logger.error({ err: error, requestId: req.id }, 'unhandled error');
    } else if (appError.status >= 500) {
      logger.warn({ err: error, requestId: req.id, code: appError.code }, appError.detail);
    }
    if (res.headersSent) {
      // The response is already streaming: the only honest move is to cut it.
      next(error);
      return;
    }
    sendError(req, res, appError);
  };
}

export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => {
    next(new NotFoundError(`No route for ${req.method} ${req.originalUrl.split('?')[0]}`));
  };
}
