import type { FieldError } from '@hwp/contracts';
import { compileLinear } from './linear-regexp';

/** Longest pattern a template may hold, and most patterns in one schema. */
export const MAX_PATTERN_LENGTH = 512;
export const MAX_PATTERNS_PER_SCHEMA = 50;

/** Keywords whose values are data, not schemas: a `pattern` inside them is no regular expression. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

const segment = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

/** Every regular expression of a JSON Schema, with its path: `pattern` values and `patternProperties` keys. */
export function schemaPatterns(schema: unknown, path: string): { path: string; pattern: string }[] {
  const found: { path: string; pattern: string }[] = [];
  const walk = (value: unknown, at: string) => {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, `${at}[${i}]`);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      if (DATA_KEYWORDS.has(key)) continue;
      const childPath = `${at}${segment(key)}`;
      if (key === 'pattern' && typeof child === 'string') found.push({ path: childPath, pattern: child });
      if (
        key === 'patternProperties' &&
        typeof child === 'object' &&
        child !== null &&
        !Array.isArray(child)
      ) {
        for (const name of Object.keys(child))
          found.push({ path: `${childPath}${segment(name)}`, pattern: name });
      }
      walk(child, childPath);
    }
  };
  walk(schema, path);
  return found;
}

/**
 * recheck is a Scala.js build of 2.9 MB, a fifth of the code the collaboration host loads: it is
 * loaded the first time a pattern is checked, not at every boot.
 */
let recheck: typeof import('recheck') | undefined;
const loadRecheck = () => (recheck ??= require('recheck') as typeof import('recheck'));

/** Time the ReDoS analysis of one pattern, and of one schema's patterns together, may take. */
const CHECK_TIMEOUT_MS = 1_000;
const SCHEMA_CHECK_MS = 3_000;

/**
 * Why a pattern may not be stored, or null when it is fine. The service runs patterns on RE2, so
 * none can stall it; patterns that backtrack exponentially (found by `recheck`) are refused anyway,
 * because browser clients validate with the templates too, on a backtracking engine.
 */
export function patternProblem(
  pattern: string,
  budget: { msLeft: number } = { msLeft: CHECK_TIMEOUT_MS },
): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `not a valid regular expression: ${(error as Error).message}`;
  }
  try {
    compileLinear(pattern);
  } catch (error) {
    return `uses syntax that cannot run in linear time (lookaround, backreferences): ${(error as Error).message}`;
  }
  if (budget.msLeft <= 0) return null;
  const { checkSync } = loadRecheck(); // before the clock starts: loading is not the pattern's time
  const started = Date.now();
  const diagnostics = checkSync(pattern, 'u', { timeout: Math.min(CHECK_TIMEOUT_MS, budget.msLeft) });
  budget.msLeft -= Date.now() - started;
  if (diagnostics.status === 'vulnerable' && diagnostics.complexity.type === 'exponential') {
    return (
      'can backtrack catastrophically (a repetition inside a repetition, or alternatives that can ' +
      'match the same text under a repetition, as in ^(a+)+$); write it so each text matches one way'
    );
  }
  return null;
}

/** Field errors for the patterns of a schema given at `field` (nothing when all are fine). */
export function schemaPatternErrors(schema: unknown, field: string): FieldError[] {
  const patterns = schemaPatterns(schema, field);
  if (patterns.length > MAX_PATTERNS_PER_SCHEMA) {
    return [{ field, message: `more than ${MAX_PATTERNS_PER_SCHEMA} patterns` }];
  }
  const errors: FieldError[] = [];
  const budget = { msLeft: SCHEMA_CHECK_MS };
  for (const { path, pattern } of patterns) {
    const problem = patternProblem(pattern, budget);
    if (problem) errors.push({ field: path, message: problem });
  }
  return errors;
}
