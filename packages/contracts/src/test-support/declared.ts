import { getMetadataStorage } from 'class-validator';

/** The properties a DTO declares (its own and inherited): the fields its whitelist lets through. */
export function declared(dto: new () => object): Set<string> {
  return new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(dto, '', true, false)
      .map((m) => m.propertyName),
  );
}

/** `camelCase` as `snake_case`. */
export const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
