import type { FieldError } from '@hwp/contracts';
import { type ClassConstructor, plainToInstance } from 'class-transformer';
import { type ValidationError as ClassValidationError, getMetadataStorage, validate } from 'class-validator';
import { ValidationError } from '../errors';
import { assertCleanInput } from './hostile-input';

/**
 * class-validator resolves a class's rules on every `validate` by scanning every decorated class of
 * the process for its ancestors (typestack/class-validator#2686: a tenth of a request's CPU here).
 * A class's own and inherited rules are all registered when it is defined, before it can be
 * validated, so the answer per class and options never changes: it is kept.
 */
function memoizeRuleLookup(): void {
  const storage = getMetadataStorage();
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const known = new WeakMap<object, Map<string, ReturnType<typeof lookup>>>();
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    let byOptions = known.get(target);
    if (!byOptions) {
      byOptions = new Map();
      known.set(target, byOptions);
    }
    const key = `${schema}|${always}|${strictGroups}|${groups?.join(',') ?? ''}`;
    let rules = byOptions.get(key);
    if (!rules) {
      rules = lookup(target, schema, always, strictGroups, groups);
      byOptions.set(key, rules);
    }
    return rules;
  };
}
memoizeRuleLookup();

/** What a field that was not sent at all answers, instead of every rule it would have to meet. */
export const REQUIRED_MESSAGE = 'is required';

/**
 * Rules that say what kind of value a field takes. When one of them fails, the field's range and
 * length rules fail too (`page=abc` is not an integer, so neither at least 1 nor at most the
 * maximum): only the kind is reported, so every bad field gets one clear message.
 */
const KIND_RULES = [
  'isInt',
  'isNumber',
  'isBoolean',
  'isString',
  'isArray',
  'isObject',
  'isUuid',
  'isIso8601',
  'isDateString',
  'isIn',
  'isEnum',
];

/** One message for a field: the failed kind rule alone, else every failed rule (duplicates once). */
function messageOf(constraints: Record<string, string>): string {
  const kind = KIND_RULES.find((rule) => rule in constraints);
  if (kind) return constraints[kind];
  return [...new Set(Object.values(constraints))].join('; ');
}

function flatten(errors: ClassValidationError[], prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const constraints = error.constraints ?? {};
    if (Object.keys(constraints).length > 0) {
      // Optional fields skip validation when absent, so an absent field with constraints is required.
      out.push({ field, message: error.value === undefined ? REQUIRED_MESSAGE : messageOf(constraints) });
    }
    if (error.children?.length) out.push(...flatten(error.children, field));
  }
  return out;
}

/** What happens to fields a DTO does not declare: refused (the default) or dropped. */
export type UnknownFields = 'reject' | 'strip';

/**
 * Turns untrusted input into a validated DTO instance: unknown fields are rejected (or, for a
 * compatibility surface whose clients send extra fields, dropped) and every field problem is
 * reported at once.
 */
export async function validateInput<T extends object>(
  dto: ClassConstructor<T>,
  input: unknown,
  where: 'body' | 'query',
  unknownFields: UnknownFields = 'reject',
): Promise<T> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ValidationError(`The ${where} must be a JSON object`);
  }
  // Form fields reach here without the JSON body's check (rejectHostileInput); it is cheap to repeat.
  assertCleanInput(input, where);
  const instance = plainToInstance(dto, input, { enableImplicitConversion: where === 'query' });
  const errors = await validate(instance, {
    whitelist: true,
    forbidNonWhitelisted: unknownFields === 'reject',
    forbidUnknownValues: true,
    // The value tells an absent field from a wrong one; it is never sent back.
    validationError: { target: false, value: true },
  });
  if (errors.length > 0) {
    const fields = flatten(errors);
    throw new ValidationError(`Invalid ${where}: ${fields.map((f) => f.field).join(', ')}`, fields);
  }
  return instance;
}
