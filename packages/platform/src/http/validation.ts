import type { FieldError } from '@hwp/contracts';
import { type ClassConstructor, plainToInstance } from 'class-transformer';
import { type ValidationError as ClassValidationError, validate } from 'class-validator';
import { ValidationError } from '../errors';
import { assertCleanInput } from './hostile-input';

function flatten(errors: ClassValidationError[], prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) out.push({ field, message });
    if (error.children?.length) out.push(...flatten(error.children, field));
  }
  return out;
}

/**
 * Turns untrusted input into a validated DTO instance: unknown fields are rejected and every
 * field problem is reported at once.
 */
export async function validateInput<T extends object>(
  dto: ClassConstructor<T>,
  input: unknown,
  where: 'body' | 'query',
): Promise<T> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ValidationError(`The ${where} must be a JSON object`);
  }
  // Form fields reach here without the JSON body's check (rejectHostileInput); it is cheap to repeat.
  assertCleanInput(input, where);
  const instance = plainToInstance(dto, input, { enableImplicitConversion: where === 'query' });
  const errors = await validate(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) {
    const fields = flatten(errors);
    throw new ValidationError(`Invalid ${where}: ${fields.map((f) => f.field).join(', ')}`, fields);
  }
  return instance;
}
