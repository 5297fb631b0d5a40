import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { runWithContext } from '../context';
import { newId } from '../ids';
import { redactUrl } from '../logger';
import {
  endSpan,
  parentContext,
  startSpan,
  traceparentOf,
  tracingEnabled,
  validTraceparent,
  withSpan,
} from '../tracing';

declare global {
  namespace Express {
    interface Request {
      /** The request id (X-Request-Id), set first on every request. */
      id: string;
    }
  }
}

/** A client's request id is reused only when it is a sane token, so logs cannot be forged. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function resolveRequestId(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && ACCEPTED_REQUEST_ID.test(value) ? value : newId();
}

/** Told of every response when it ends (the request metrics). */
export type ResponseObserver = (req: Request, res: Response, seconds: number) => void;

export interface RequestContextOptions {
  /** Writes one access-log line per finished response (pino), at warn for 4xx and error for 5xx. */
  logger?: Logger;
  /** Paths whose successful answers are not logged (health probes). */
  quietPaths?: string[];
  /** Headers every response carries (the security headers), set in one pass. */
  headers?: [name: string, value: string][];
  observe?: ResponseObserver;
}

/** `${baseUrl}${route}` of the matched route, the template and never the raw URL; undefined when none matched. */
export function routeTemplate(req: Request): string | undefined {
  return req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : undefined;
}

/**
 * The first middleware of every request, in one pass (each middleware hop costs): it gives the
 * request its id (from `X-Request-Id` or new) and echoes it, sets the fixed response headers, opens
 * the async context with the trace position (a server span when tracing is enabled, named after the
 * route template when the response ends; else the caller's `traceparent` passed on as it came), and
 * on finish records the metrics and writes the access-log line.
 */
export function requestContext(options: RequestContextOptions = {}): RequestHandler {
  const { observe } = options;
  // The access line is built here from fields that hold no secret (the URL goes through redactUrl):
  // it skips the logger's key redaction, which costs several times the rest of the line.
  const logger = options.logger?.child({}, { redact: { paths: [] } });
  const quiet = new Set(options.quietPaths ?? []);
  const fixed = options.headers ?? [];
  return (req, res, next) => {
    const started = performance.now();
    const requestId = resolveRequestId(req.headers['x-request-id']);
    req.id = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('API-Version', '1');
    for (const [name, value] of fixed) res.setHeader(name, value);
    if (logger || observe) {
      // A response finishes once: `on` spares the wrapper `once` allocates.
      res.on('finish', () => {
        const seconds = (performance.now() - started) / 1000;
        observe?.(req, res, seconds);
        if (logger) accessLog(logger, req, res, requestId, seconds, quiet);
      });
    }
    const incoming = validTraceparent(req.headers.traceparent);
    if (!tracingEnabled()) {
      runWithContext(incoming ? { requestId, traceparent: incoming } : { requestId }, () => next());
      return;
    }
    const tracestate = typeof req.headers.tracestate === 'string' ? req.headers.tracestate : undefined;
    const parent = parentContext(incoming, tracestate);
    const span = startSpan(req.method, 'server', parent, {
      'http.request.method': req.method,
      'url.path': req.path,
      'hwp.request_id': requestId,
    });
    res.once('finish', () => {
      const route = routeTemplate(req);
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      endSpan(span, res.statusCode >= 500 ? new Error(`HTTP ${res.statusCode}`) : undefined);
    });
    runWithContext({ requestId, traceparent: traceparentOf(span) }, () => withSpan(parent, span, next));
  };
}

/** One line per response: method, URL with secrets redacted, status, time; errors are logged where handled. */
function accessLog(
  logger: Logger,
  req: Request,
  res: Response,
  requestId: string,
  seconds: number,
  quiet: Set<string>,
): void {
  const status = res.statusCode;
  const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
  if (level === 'info' && (quiet.has(req.originalUrl) || !logger.isLevelEnabled('info'))) return;
  logger[level](
    {
      requestId,
      req: { method: req.method, url: redactUrl(req.originalUrl) },
      res: { statusCode: status },
      responseTime: Math.round(seconds * 1000),
    },
    status >= 500 ? 'request errored' : 'request completed',
  );
}
