import { type ClassConstructor, plainToInstance } from 'class-transformer';
import { type ValidationError, validateSync } from 'class-validator';

/** Where the input arrives: a query string is converted to the declared types first, as the services do. */
export type InputKind = 'body' | 'query';

function paths(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.keys(error.constraints ?? {}).length > 0 ? [path] : [];
    return [...own, ...paths(error.children ?? [], path)];
  });
}

/**
 * The fields a DTO refuses for `input`, as dotted paths (`items.0.qty`), sorted: validated with the
 * options of the services' `validateInput` (whitelist, unknown fields refused), so a test sees what a
 * client would be told.
 */
export function refused<T extends object>(
  dto: ClassConstructor<T>,
  input: Record<string, unknown>,
  kind: InputKind = 'body',
): string[] {
  const instance = plainToInstance(dto, input, { enableImplicitConversion: kind === 'query' });
  const errors = validateSync(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
  });
  return paths(errors).sort();
}

/** The value a DTO holds for `input` after conversion (a form field's transform, a query's types). */
export function converted<T extends object>(
  dto: ClassConstructor<T>,
  input: Record<string, unknown>,
  kind: InputKind = 'body',
): T {
  return plainToInstance(dto, input, { enableImplicitConversion: kind === 'query' });
}
