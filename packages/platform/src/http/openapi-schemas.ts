import type { ClassConstructor } from 'class-transformer';
import { getMetadataStorage, IS_ISO8601, ValidationTypes } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { defaultConverters, type SchemaConverter } from 'class-validator-jsonschema/build/defaultConverters';
import type { IOptions } from 'class-validator-jsonschema/build/options';

export type JsonSchema = Record<string, unknown>;

/** One answer of an operation in the OpenAPI document. */
export interface ResponseSpec {
  description: string;
  /** A DTO class (its schema is referenced) or an inline JSON schema. */
  schema?: ClassConstructor<object> | JsonSchema;
  /** Default application/json. */
  contentType?: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export const REF_PREFIX = '#/components/schemas/';

// class-transformer keeps its @Type() metadata in an entry point without typings.
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: IOptions['classTransformerMetadataStorage'];
};

const customValidation = defaultConverters[ValidationTypes.CUSTOM_VALIDATION] as SchemaConverter;

/**
 * A custom validator (ValidateBy) is described by the property's TypeScript type; the library
 * refers to any class as a component, so a `Record<string, unknown>` became `$ref: Object`, which
 * no document defines. Plain objects and arrays are described as such instead.
 */
const describeCustomValidation: SchemaConverter = (meta, options) => {
  const type: unknown =
    typeof meta.target === 'function'
      ? Reflect.getMetadata('design:type', meta.target.prototype, meta.propertyName)
      : undefined;
  if (type === Object) return { type: 'object' };
  if (type === Array) return { type: 'array' };
  return customValidation(meta, options);
};

/**
 * The JSON schema of every class-validator DTO loaded in the process, by class name. `@IsISO8601()`
 * marks timestamps the services write with `toISOString()`, so it is documented as `date-time`
 * (the library's default, `oneOf` date or date-time, matches both for a date-time value).
 */
export function contractSchemas(): Record<string, JsonSchema> {
  return validationMetadatasToSchemas({
    refPointerPrefix: REF_PREFIX,
    classValidatorMetadataStorage: getMetadataStorage(),
    // Lets @Type(() => Dto) arrays and nested objects resolve to their schemas.
    classTransformerMetadataStorage: defaultMetadataStorage,
    additionalConverters: {
      [IS_ISO8601]: { type: 'string', format: 'date-time' },
      [ValidationTypes.CUSTOM_VALIDATION]: describeCustomValidation,
    },
  }) as Record<string, JsonSchema>;
}

/** The names of every `#/components/schemas/<name>` reference in `value`. */
function refsIn(value: unknown, into: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) refsIn(item, into);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(REF_PREFIX)) {
        into.push(child.slice(REF_PREFIX.length));
      } else {
        refsIn(child, into);
      }
    }
  }
}

/**
 * The schemas `root` (the document's paths) references, directly or through other schemas: a host's
 * document describes its own operations, not every DTO of the contracts package. Throws on a
 * reference to a schema that does not exist, so a broken `$ref` never reaches a client.
 */
export function referencedSchemas(
  root: unknown,
  all: Record<string, JsonSchema>,
): Record<string, JsonSchema> {
  const pending: string[] = [];
  refsIn(root, pending);
  const kept: Record<string, JsonSchema> = {};
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (name in kept) continue;
    const schema = all[name];
    if (!schema) throw new Error(`OpenAPI: ${REF_PREFIX}${name} is referenced but no DTO defines it`);
    kept[name] = schema;
    refsIn(schema, pending);
  }
  return Object.fromEntries(
    Object.keys(kept)
      .sort()
      .map((name) => [name, kept[name]]),
  );
}
