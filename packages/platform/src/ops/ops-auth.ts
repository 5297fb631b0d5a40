import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { NotFoundError, UnauthorizedError } from '../errors';

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Guards operator routes: with OPS_TOKEN set they need `Authorization: Bearer <OPS_TOKEN>`;
 * without it they are open in development and absent (404) in production.
 */
export function requireOpsToken(opsToken: string | undefined, production: boolean): RequestHandler {
  return (req, _res, next) => {
    if (!opsToken) {
      if (production) throw new NotFoundError(`No route for ${req.method} ${req.originalUrl.split('?')[0]}`);
      next();
      return;
    }
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    if (!token || !sameSecret(token, opsToken)) throw new UnauthorizedError('Operator token required');
    next();
  };
}
