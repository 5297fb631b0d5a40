import { ErrorBodyDto, PART_SNAKE_CASE_FIELDS } from '@hwp/contracts';
import type { RequestHandler } from 'express';

export const TAGS = ['parts'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Requests may use the snake_case names of the interface document (DECISIONS.md section 0). */
export const acceptSnakeCase: RequestHandler = (req, _res, next) => {
  const body: unknown = req.body;
  if (isPlainObject(body)) {
    for (const [snake, camel] of Object.entries(PART_SNAKE_CASE_FIELDS)) {
      if (snake in body && !(camel in body)) {
        body[camel] = body[snake];
        delete body[snake];
      }
    }
  }
  next();
};

export const CONFLICT = {
  description: 'The move is not allowed from the current status',
  schema: ErrorBodyDto,
};
export const NOT_FOUND = { description: 'No such part (or version) in the workspace', schema: ErrorBodyDto };
