import type { ClassConstructor } from 'class-transformer';
import { pathParamSchema } from './id-params';
import {
  contractSchemas,
  type JsonSchema,
  REF_PREFIX,
  type ResponseSpec,
  referencedSchemas,
} from './openapi-schemas';

export type { JsonSchema, ResponseSpec } from './openapi-schemas';

/** A response whose body is bytes (a download, an image), not JSON. */
export function binaryResponse(description: string, contentType = 'application/octet-stream'): ResponseSpec {
  return { description, contentType, schema: { type: 'string', format: 'binary' } };
}

export interface OperationSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';
  /** Express-style path (`/files/:id`). */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  operationId?: string;
  body?: ClassConstructor<object>;
  /** Non-JSON bodies (multipart, raw). */
  bodyContent?: Record<string, { schema: JsonSchema }>;
  query?: ClassConstructor<object>;
  /** Security requirement names (see OpenApiInfo.securitySchemes); none = open (`security: []`). */
  security?: string[];
  deprecated?: boolean;
  responses: Record<number, ResponseSpec>;
  /** Specification extensions (`x-...`) written into the operation, e.g. `x-required-role`. */
  extensions?: Record<`x-${string}`, unknown>;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  /** Default: `/`, the host that serves the document. */
  servers?: { url: string; description?: string }[];
  securitySchemes?: Record<string, JsonSchema>;
}

function isClass(value: unknown): value is ClassConstructor<object> {
  return typeof value === 'function';
}

/** `/files/:id` -> `/files/{id}` plus the parameter names. */
export function toOpenApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/[:*]([A-Za-z0-9_]+)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

/**
 * Collects the operations a host serves and renders one OpenAPI 3.1 document. Schemas come from
 * the class-validator decorators of the contracts' DTO classes, so docs and validation agree.
 */
export class OpenApiBuilder {
  private readonly operations: OperationSpec[] = [];

  constructor(private readonly info: OpenApiInfo) {}

  add(operation: OperationSpec): void {
    this.operations.push(operation);
  }

  list(): readonly OperationSpec[] {
    return this.operations;
  }

  build(): JsonSchema {
    const schemas = contractSchemas();
    // A class without a decorated property of its own has no metadata, hence no schema: it has its
    // nearest ancestor's (`ChatHistoryQuery extends PageQuery {}`), else an empty object.
    const ensureSchema = (dto: ClassConstructor<object>): JsonSchema => {
      let ancestor: unknown = dto;
      while (isClass(ancestor) && !schemas[ancestor.name]) ancestor = Object.getPrototypeOf(ancestor);
      schemas[dto.name] ??= isClass(ancestor)
        ? structuredClone(schemas[ancestor.name])
        : { type: 'object', properties: {} };
      return schemas[dto.name];
    };
    const schemaOf = (value: ClassConstructor<object> | JsonSchema): JsonSchema => {
      if (!isClass(value)) return value;
      ensureSchema(value);
      return { $ref: `${REF_PREFIX}${value.name}` };
    };

    const paths: Record<string, Record<string, unknown>> = {};
    for (const op of this.operations) {
      const { path, params } = toOpenApiPath(op.path);
      const parameters: JsonSchema[] = params.map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: pathParamSchema(name),
      }));
      if (op.query) {
        const querySchema = ensureSchema(op.query);
        const properties = (querySchema.properties ?? {}) as Record<string, JsonSchema>;
        const required = new Set((querySchema.required as string[] | undefined) ?? []);
        for (const [name, schema] of Object.entries(properties)) {
          parameters.push({ name, in: 'query', required: required.has(name), schema });
        }
      }
      const responses: Record<string, unknown> = {};
      for (const [status, spec] of Object.entries(op.responses)) {
        responses[status] = {
          description: spec.description,
          ...(spec.headers ? { headers: spec.headers } : {}),
          ...(spec.schema
            ? { content: { [spec.contentType ?? 'application/json']: { schema: schemaOf(spec.schema) } } }
            : {}),
        };
      }
      const requestBody = op.body
        ? { required: true, content: { 'application/json': { schema: schemaOf(op.body) } } }
        : op.bodyContent
          ? { required: true, content: op.bodyContent }
          : undefined;
      paths[path] ??= {};
      paths[path][op.method] = {
        summary: op.summary,
        ...(op.description ? { description: op.description } : {}),
        operationId:
          op.operationId ??
          `${op.method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ? c.toUpperCase() : ''))}`,
        tags: op.tags ?? [],
        ...(op.deprecated ? { deprecated: true } : {}),
        ...(parameters.length ? { parameters } : {}),
        ...(requestBody ? { requestBody } : {}),
        // Alternatives (any one scheme suffices); an open route says so with an empty list.
        security: (op.security ?? []).map((name) => ({ [name]: [] })),
        ...op.extensions,
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      info: {
        title: this.info.title,
        version: this.info.version,
        description: this.info.description,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: this.info.servers ?? [{ url: '/', description: 'The host serving this document' }],
      paths,
      components: {
        schemas: referencedSchemas(paths, schemas),
        ...(this.info.securitySchemes ? { securitySchemes: this.info.securitySchemes } : {}),
      },
    };
  }
}
