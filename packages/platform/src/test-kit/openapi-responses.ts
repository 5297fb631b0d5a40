import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;

interface MediaType {
  schema?: Json;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
}
interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Json> };
}

/** One answer as a test received it. */
export interface ReceivedResponse {
  method: string;
  /** The request path, without the query string. */
  path: string;
  status: number;
  /** The Content-Type header ('' when none). */
  contentType: string;
  /** The raw body text ('' when none or not text). */
  text: string;
  /** The parsed body (superagent's `res.body`). */
  body: unknown;
}

interface Route {
  template: string;
  /** One pattern per segment: a literal, or null for a parameter. */
  segments: (string | null)[];
  operations: Record<string, Operation>;
}

const DOCUMENT_ID = 'openapi';
const SCHEMA_REF = '#/components/schemas/';
const ERROR_SCHEMA = 'ErrorBodyDto';
/** OpenAPI formats that JSON Schema does not define; they only annotate. */
const ANNOTATION_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'];

export function isJson(contentType: string): boolean {
  return /^application\/([\w.-]+\+)?json\b/i.test(contentType);
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A copy of a schema in which every object with listed `properties` and no word on other
 * properties is closed (`additionalProperties: false`): a field the document does not name fails
 * the check. Schemas that say `additionalProperties` (free objects) stay as they are.
 */
function closed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closed);
  if (!isPlainObject(value)) return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof child === 'string' && child.startsWith(SCHEMA_REF)
        ? `${DOCUMENT_ID}${child}`
        : closed(child);
  }
  const types = Array.isArray(value.type) ? value.type : [value.type];
  if (
    types.includes('object') &&
    isPlainObject(value.properties) &&
    !('additionalProperties' in value) &&
    !('unevaluatedProperties' in value) &&
    !('patternProperties' in value)
  ) {
    out.additionalProperties = false;
  }
  return out;
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Literal segments before parameters: `/tenant/current` wins over `/tenant/{tenant_id}`. */
function bySpecificity(a: Route, b: Route): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const literalA = a.segments[i] !== null;
    const literalB = b.segments[i] !== null;
    if (literalA !== literalB) return literalA ? -1 : 1;
  }
  return 0;
}

/**
 * Checks answers against the response schemas of one OpenAPI document: the operation is found by
 * method and path template, the response by status (exact, `4XX`, `default`); an error status the
 * operation does not list is checked against the shared error body.
 */
export class OpenApiResponses {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false });
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    addFormats(this.ajv);
    for (const format of ANNOTATION_FORMATS) this.ajv.addFormat(format, true);
    // One schema holding every component, so `openapi#/components/schemas/X` refs resolve in it.
    this.ajv.addSchema(
      { $id: DOCUMENT_ID, components: { schemas: closed(document.components?.schemas ?? {}) } },
      DOCUMENT_ID,
    );
    this.routes = Object.entries(document.paths ?? {})
      .map(([template, operations]) => ({
        template,
        segments: template
          .split('/')
          .slice(1)
          .map((segment) => (/^\{[^}]+\}$/.test(segment) ? null : segment)),
        operations,
      }))
      .sort(bySpecificity);
  }

  /** The documented operation of a request: exact segments first, then a trailing wildcard. */
  private find(method: string, path: string): { route: Route; operation: Operation } | null {
    const segments = path.split('/').slice(1);
    const matches = (route: Route, rest: boolean) => {
      const last = route.segments.length - 1;
      if (rest ? segments.length <= last : segments.length !== route.segments.length) return false;
      if (rest && route.segments[last] !== null) return false;
      return route.segments.every((literal, i) => literal === null || literal === segments[i]);
    };
    for (const rest of [false, true]) {
      for (const route of this.routes) {
        const operation = route.operations[method];
        if (operation && matches(route, rest)) return { route, operation };
      }
    }
    return null;
  }

  private validator(key: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(closed(schema) as Json);
      this.validators.set(key, validate);
    }
    return validate;
  }

  private errorBody(received: ReceivedResponse, where: string): string | null {
    if (!isJson(received.contentType)) {
      return `${where} answered ${received.status} with ${received.contentType || 'no Content-Type'}, not the JSON error body`;
    }
    const validate = this.ajv.getSchema(`${DOCUMENT_ID}${SCHEMA_REF}${ERROR_SCHEMA}`);
    if (!validate)
      return `${where}: the document has no components.schemas.${ERROR_SCHEMA} to check an error body`;
    if (validate(received.body)) return null;
    return this.describe(
      `${where} answered ${received.status} (not listed, so checked as the error body)`,
      `${SCHEMA_REF}${ERROR_SCHEMA}`,
      validate.errors,
    );
  }

  private describe(what: string, schema: string, errors: ErrorObject[] | null | undefined): string {
    const lines = (errors ?? []).map((e) => {
      const params = Object.entries(e.params)
        .map(([name, value]) => `${name}: ${JSON.stringify(value)}`)
        .join(', ');
      return `  ${e.instancePath || '(body)'} ${e.message ?? e.keyword}${params ? ` (${params})` : ''}`;
    });
    return `${what}, which does not match the documented schema ${schema}:\n${lines.join('\n')}`;
  }

  /**
   * Null when the answer conforms to the document or the document says nothing about it (a path or
   * method it does not list, a non-JSON body of a documented non-JSON media type); otherwise what
   * is wrong, naming method, path, status and the schema errors.
   */
  check(received: ReceivedResponse): string | null {
    const method = received.method.toLowerCase();
    const found = this.find(method, received.path);
    if (!found) return null;
    const { route, operation } = found;
    const where = `${received.method.toUpperCase()} ${received.path} (operation ${method.toUpperCase()} ${route.template})`;
    const status = String(received.status);
    const responses = operation.responses ?? {};
    const key = [status, `${status[0]}XX`, `${status[0]}xx`, 'default'].find((k) => k in responses);
    if (!key) {
      if (received.status >= 400) return this.errorBody(received, where);
      return `${where} answered ${status}, a status the document does not list (${Object.keys(responses).join(', ')})`;
    }
    const content = responses[key].content;
    const mediaType = received.contentType.split(';')[0].trim().toLowerCase();
    if (!content) {
      if (isJson(mediaType) && received.text.trim() !== '') {
        return `${where} answered ${status} with a JSON body, documented without one`;
      }
      return null;
    }
    const media = content[mediaType] ?? (isJson(mediaType) ? content['application/json'] : undefined);
    if (!media) {
      if (!isJson(mediaType)) return null;
      return `${where} answered ${status} with ${mediaType}, documented as ${Object.keys(content).join(', ')}`;
    }
    if (!media.schema || !isJson(mediaType)) return null;
    const pointer = `#/paths/${escapePointer(route.template)}/${method}/responses/${key}`;
    const validate = this.validator(`${pointer} ${mediaType}`, media.schema);
    if (validate(received.body)) return null;
    const ref = typeof media.schema.$ref === 'string' ? media.schema.$ref : `${pointer}/content`;
    return this.describe(`${where} answered ${status}`, ref, validate.errors);
  }
}
