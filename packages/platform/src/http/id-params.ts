import { ErrorBodyDto } from '@hwp/contracts';
import type { RequestHandler } from 'express';
import { NotFoundError } from '../errors';
import type { JsonSchema, ResponseSpec } from './openapi-schemas';

/** A UUID in its canonical text form, any version, either case (what Postgres' uuid type prints). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `:id`, `:versionId`, `:tenant_id`: path parameters that name a row by its uuid. */
export function isIdParam(name: string): boolean {
  return name === 'id' || /[a-z0-9]Id$/.test(name) || /[a-z0-9]_id$/.test(name);
}

/** The OpenAPI schema of a path parameter: ids are documented as uuids. */
export function pathParamSchema(name: string): JsonSchema {
  return isIdParam(name) ? { type: 'string', format: 'uuid' } : { type: 'string' };
}

function capitalise(words: string): string {
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * What a parameter names, for its 404: `:versionId` and `:tenant_id` their prefix, `:id` the path
 * segment before it made singular (`/v1/parts/:id` -> "Part", `/dead-letters/:id` -> "Dead letter").
 */
function thingNamed(name: string, segmentBefore: string | undefined): string {
  if (name !== 'id') return capitalise(name.replace(/_?[Ii]d$/, '').replace(/_/g, ' '));
  const noun = (segmentBefore ?? 'record').replace(/[-_]/g, ' ');
  return capitalise(noun.endsWith('ies') ? `${noun.slice(0, -3)}y` : noun.replace(/s$/, ''));
}

/**
 * For a route whose path has id parameters: the middleware that answers 404 `not_found` for a
 * value that is not a UUID (no row can have it; the database would refuse it as malformed) and the
 * 404 to document. Undefined for a path without ids.
 */
export function uuidParams(path: string): { check: RequestHandler; notFound: ResponseSpec } | undefined {
  const segments = path.split('/');
  const ids: { name: string; thing: string }[] = [];
  segments.forEach((segment, index) => {
    const name = /^[:*]([A-Za-z0-9_]+)$/.exec(segment)?.[1];
    if (name && isIdParam(name)) ids.push({ name, thing: thingNamed(name, segments[index - 1]) });
  });
  if (ids.length === 0) return undefined;
  const check: RequestHandler = (req, _res, next) => {
    for (const { name, thing } of ids) {
      const value = req.params[name];
      if (typeof value !== 'string' || !UUID_PATTERN.test(value))
        throw new NotFoundError(`${thing} not found`);
    }
    next();
  };
  const things = capitalise(ids.map((id) => id.thing.toLowerCase()).join(' or '));
  return { check, notFound: { description: `${things} not found`, schema: ErrorBodyDto } };
}
