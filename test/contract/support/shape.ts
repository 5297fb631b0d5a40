import type { Shape } from '../service-interface.rows';

/** The shape checker of the contract test: what the table's `body_shape`s mean (see `Shape`). */

function typeMatches(name: string, value: unknown): boolean {
  switch (name) {
    case 'any':
      return value !== undefined;
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'timestamp':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) && /^\d{4}-\d\d-\d\dT/.test(value);
    default:
      return typeof value === name;
  }
}

/** What in `value` does not have `shape` (empty when it does). */
export function shapeProblems(shape: Shape, value: unknown, at = 'body'): string[] {
  if (typeof shape === 'string') {
    return shape.split('|').some((name) => typeMatches(name, value))
      ? []
      : [`${at}: expected ${shape}, got ${JSON.stringify(value)?.slice(0, 120)}`];
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value))
      return [`${at}: expected an array, got ${JSON.stringify(value)?.slice(0, 120)}`];
    if (value.length === 0) return [`${at}: expected a non-empty array`];
    return value.flatMap((item, i) => shapeProblems(shape[0], item, `${at}[${i}]`));
  }
  if ('$or' in shape && Array.isArray(shape.$or)) {
    const each = (shape.$or as Shape[]).map((s) => shapeProblems(s, value, at));
    return each.some((p) => p.length === 0)
      ? []
      : [`${at}: none of the alternatives: ${each.flat().join('; ')}`];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [`${at}: expected an object, got ${JSON.stringify(value)?.slice(0, 120)}`];
  return Object.entries(shape).flatMap(([key, sub]) => {
    const optional = key.endsWith('?');
    const field = optional ? key.slice(0, -1) : key;
    const present = Object.hasOwn(value, field);
    if (!present) return optional ? [] : [`${at}.${field}: missing`];
    return shapeProblems(sub as Shape, (value as Record<string, unknown>)[field], `${at}.${field}`);
  });
}
