import type { RequestHandler } from 'express';
import { runWithContext } from '../context';
import { newId } from '../ids';
import {
  endSpan,
  parentContext,
  startSpan,
  traceparentOf,
  tracingEnabled,
  validTraceparent,
  withSpan,
} from '../tracing';

/** A client's request id is reused only when it is a sane token, so logs cannot be forged. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function resolveRequestId(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && ACCEPTED_REQUEST_ID.test(value) ? value : newId();
}

/**
 * Gives the request its id (from `X-Request-Id` or new), echoes it, and opens the async context with
 * the trace position: a server span when tracing is enabled (named after the route template when the
 * response ends), else the caller's `traceparent` passed on as it came.
 */
export function requestContext(): RequestHandler {
  return (req, res, next) => {
    const requestId = resolveRequestId(req.headers['x-request-id']);
    req.id = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('API-Version', '1');
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
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : undefined;
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
