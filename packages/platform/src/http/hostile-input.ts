import type { FieldError } from '@hwp/contracts';
import type { RequestHandler } from 'express';
import { ValidationError } from '../errors';

export interface InputLimits {
  /** Deepest nesting of objects and arrays (class-transformer recurses per level). */
  maxDepth: number;
  /** Most object keys plus array elements in one input. */
  maxEntries: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = { maxDepth: 32, maxEntries: 20_000 };

/** Keys that reach an object's prototype when copied with assignment or merged. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Why a string cannot be stored as text: a NUL (Postgres refuses it) or a lone UTF-16 surrogate. */
function badString(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (!value.isWellFormed()) return 'must be well-formed Unicode (a lone surrogate was found)';
  return null;
}

/**
 * The first problem of an untrusted input (a parsed JSON body, a query, form fields), found without
 * recursion so no input can overflow the stack: nesting deeper than `maxDepth`, more than
 * `maxEntries` keys and elements, a prototype key anywhere, or a string (value or key) that is not
 * storable text. Null when the input is clean.
 */
export function inspectInput(
  input: unknown,
  where: string,
  limits: InputLimits = DEFAULT_INPUT_LIMITS,
): FieldError | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: input, path: where, depth: 0 }];
  let entries = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === 'string') {
      const why = badString(value);
      if (why) return { field: path, message: why };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= limits.maxDepth) {
      return { field: path, message: `nesting deeper than ${limits.maxDepth} levels` };
    }
    const keys = Object.keys(value);
    entries += keys.length;
    if (entries > limits.maxEntries) {
      return { field: where, message: `more than ${limits.maxEntries} keys and elements` };
    }
    const isArray = Array.isArray(value);
    for (const key of keys) {
      const child = isArray ? `${path}[${key}]` : `${path}.${key}`;
      if (!isArray) {
        if (PROTOTYPE_KEYS.has(key)) return { field: child, message: `the key "${key}" is not allowed` };
        const why = badString(key);
        if (why) return { field: path, message: `a key ${why}` };
      }
      stack.push({ value: (value as Record<string, unknown>)[key], path: child, depth: depth + 1 });
    }
  }
  return null;
}

/** Throws the 400 for the first problem of `input` (see inspectInput). */
export function assertCleanInput(input: unknown, where: string, limits?: InputLimits): void {
  const problem = inspectInput(input, where, limits);
  if (problem) throw new ValidationError(`Invalid ${where}: ${problem.field} ${problem.message}`, [problem]);
}

/**
 * Refuses a hostile JSON body or query before any route sees it (class-transformer, the database and
 * `Object.assign` all trust their input); runs after the JSON parser. Multipart form fields are
 * checked where they are validated (validateInput).
 */
export function rejectHostileInput(limits: InputLimits = DEFAULT_INPUT_LIMITS): RequestHandler {
  return (req, _res, next) => {
    try {
      // Without a query string the query is empty (and not worth parsing just to look).
      if (req.url.includes('?')) assertCleanInput(req.query, 'query', limits);
      if (req.body !== undefined) assertCleanInput(req.body, 'body', limits);
      next();
    } catch (error) {
      next(error);
    }
  };
}
