import { BOM_SNAKE_CASE_FIELDS, ErrorBodyDto } from '@hwp/contracts';
import type { RequestHandler } from 'express';

export const TAGS = ['boms'];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function camelise(body: Record<string, unknown>): void {
  for (const [snake, camel] of Object.entries(BOM_SNAKE_CASE_FIELDS)) {
    if (snake in body && !(camel in body)) {
      body[camel] = body[snake];
      delete body[snake];
    }
  }
}

/**
 * Requests may use the snake_case names of the interface document (DECISIONS.md section 0), on the
 * body, its items, their alternates and the effectivity object.
 */
export const acceptSnakeCase: RequestHandler = (req, _res, next) => {
  const body: unknown = req.body;
  if (isObject(body)) {
    camelise(body);
    for (const list of [body.items, body.alternates]) {
      if (!Array.isArray(list)) continue;
      for (const entry of list) {
        if (!isObject(entry)) continue;
        camelise(entry);
        if (Array.isArray(entry.alternates)) for (const a of entry.alternates) if (isObject(a)) camelise(a);
      }
    }
    if (isObject(body.effectivity)) camelise(body.effectivity);
  }
  next();
};

export const NOT_FOUND = {
  description: 'No such BOM (or line, or part) in the workspace',
  schema: ErrorBodyDto,
};
export const NOT_DRAFT = {
  description: 'The BOM is not a draft (or the move is not allowed from its status)',
  schema: ErrorBodyDto,
};
export const INVALID = { description: 'Invalid input (the error names the field)', schema: ErrorBodyDto };
