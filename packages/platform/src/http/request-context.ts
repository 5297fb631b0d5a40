import type { RequestHandler } from 'express';
import { runWithContext } from '../context';
import { newId } from '../ids';

/** A client's request id is reused only when it is a sane token, so logs cannot be forged. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function resolveRequestId(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && ACCEPTED_REQUEST_ID.test(value) ? value : newId();
}

/** Gives the request its id (from `X-Request-Id` or new), echoes it, and opens the async context. */
export function requestContext(): RequestHandler {
  return (req, res, next) => {
    const requestId = resolveRequestId(req.headers['x-request-id']);
    req.id = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('API-Version', '1');
    runWithContext({ requestId }, () => next());
  };
}
