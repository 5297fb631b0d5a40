import { type ClassConstructor, Type } from 'class-transformer';
import { IsArray, IsObject, ValidateNested } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/**
 * Marks a response property as possibly `null` in the OpenAPI schema (the class-validator
 * decorators describe the non-null value).
 */
export function Nullable(): PropertyDecorator {
  return JSONSchema((source) => {
    if ('$ref' in source || 'allOf' in source || 'anyOf' in source || !source.type)
      return { anyOf: [source, { type: 'null' }] };
    const nullable = { ...source, type: [source.type, 'null'] } as typeof source;
    // An enum lists its values: null must be among them too.
    if (Array.isArray(source.enum)) nullable.enum = [...source.enum, null];
    return nullable;
  }) as PropertyDecorator;
}

/**
 * A free-form JSON object: validated as an object (`@IsObject()`) and documented as one with any
 * properties. Without a class-validator decorator a property would be missing from the schema.
 */
export function FreeFormObject(description?: string): PropertyDecorator {
  return (target, property) => {
    IsObject()(target, property);
    JSONSchema({
      type: 'object',
      additionalProperties: true,
      ...(description ? { description } : {}),
    })(target, property as string);
  };
}

/** An array of `type` objects, each validated (and described in the schema) as that class. */
export function NestedList(type: () => ClassConstructor<object>): PropertyDecorator {
  return (target, property) => {
    IsArray()(target, property);
    ValidateNested({ each: true })(target, property);
    Type(type)(target, property);
  };
}
