import { ErrorBodyDto } from '@hwp/contracts';
import type { ClassConstructor } from 'class-transformer';
import {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import { AppError } from '../errors';
import { uuidParams } from './id-params';
import type { OpenApiBuilder, OperationSpec, ResponseSpec } from './openapi';
import { type UnknownFields, validateInput } from './validation';

type Method = OperationSpec['method'];

/** What a rate-limited route answers once the caller is over its quota (DECISIONS.md section 0). */
const TOO_MANY_REQUESTS: ResponseSpec = {
  description: 'Too many requests',
  schema: ErrorBodyDto,
  headers: {
    'Retry-After': {
      description: 'Seconds until the quota window resets',
      schema: { type: 'integer', minimum: 0 },
    },
    'RateLimit-Policy': {
      description: 'The quota (IETF draft-8), e.g. `"login"; q=5; w=900; pk=:ZTNiMGM0NDI5OGZj:`',
      schema: { type: 'string' },
    },
    RateLimit: {
      description: 'What is left of the quota (IETF draft-8), e.g. `"login"; r=0; t=42`',
      schema: { type: 'string' },
    },
  },
};

/** The query string as express parsed it (what a route without a `query` DTO gets). */
export type RawQuery = Request['query'];

/** What a route handler receives: the validated body and query, the path parameters, and the raw pair. */
export interface RouteInput<Body = unknown, Query = RawQuery> {
  /** The body validated against the route's `body` DTO; without one, the body as parsed. */
  body: Body;
  /** The query validated against the route's `query` DTO; without one, the query as parsed. */
  query: Query;
  /** Path parameters as strings (a wildcard's segments joined with `/`). */
  params: Record<string, string>;
  req: Request;
  res: Response;
  next: NextFunction;
}

/**
 * A handler gets typed input. A value it returns is sent as JSON with the route's success status;
 * handlers that stream, redirect or answer without a body write the response (`res`) themselves.
 */
export type RouteHandler<Body = unknown, Query = RawQuery> = (input: RouteInput<Body, Query>) => unknown;

export interface RouteSpec<Body = unknown, Query = RawQuery> extends Omit<OperationSpec, 'body' | 'query'> {
  body?: ClassConstructor<Body & object>;
  query?: ClassConstructor<Query & object>;
  /** Status of a returned body; default the lowest 2xx of `responses`, else 200. */
  status?: number;
  /** Runs before validation (authentication, role checks, rate limits, multer). */
  before?: RequestHandler[];
  /** A limiter from createRateLimiter is in `before`: documents the 429 answer. */
  rateLimited?: boolean;
  /**
   * Cross-origin access (the `cors` package's middleware): runs first, so every answer of the route
   * carries its headers (a 401 too), and answers the path's preflight (OPTIONS), which a browser
   * sends before a request with Authorization, If-Range or a Range it does not deem simple.
   */
  cors?: RequestHandler;
  /** Body and query fields the DTOs do not declare: refused (default) or ignored. */
  unknownFields?: UnknownFields;
  handler: RouteHandler<Body, Query>;
}

function successStatus(spec: { status?: number; responses: Record<number, unknown> }): number {
  if (spec.status) return spec.status;
  const ok = Object.keys(spec.responses)
    .map(Number)
    .filter((code) => code >= 200 && code < 300)
    .sort((a, b) => a - b);
  return ok[0] ?? 200;
}

function stringParams(params: Request['params']): Record<string, string> {
  const out: Record<string, string> = {};
  const given = params as Record<string, string | string[] | undefined>;
  for (const name of Object.keys(given)) {
    const value = given[name];
    if (value !== undefined)
      out[name] = typeof value === 'string' ? value : Array.isArray(value) ? value.join('/') : String(value);
  }
  return out;
}

/**
 * The only way features add routes: each route is registered on the express router AND in the
 * host's OpenAPI document, with body/query validation from the same DTO classes.
 */
export class ApiRouter {
  private readonly routes: { method: Method; path: string; handlers: RequestHandler[] }[] = [];
  /** The CORS middleware of each path whose routes declare one: it answers the path's preflight. */
  private readonly preflights = new Map<string, RequestHandler>();

  /**
   * `defaultCors`: the CORS middleware of every route that declares none (the host's CORS_ORIGINS),
   * so every path's preflight is answered and every answer, errors too, carries its headers.
   */
  constructor(
    private readonly openapi: OpenApiBuilder,
    private readonly defaultCors?: RequestHandler,
  ) {}

  route<Body = unknown, Query = RawQuery>(spec: RouteSpec<Body, Query>): this {
    const { before = [], handler, rateLimited, unknownFields, cors, status: _status, ...operation } = spec;
    const status = successStatus(spec);
    const responses = { ...operation.responses };
    // Every operation can fail with the shared error body; document it once here. Any request can
    // be refused with 400: a hostile query or body (rejectHostileInput) reaches no route.
    responses[400] ??= {
      description: operation.body || operation.query ? 'Invalid input' : 'Malformed or hostile query or body',
      schema: ErrorBodyDto,
    };
    if (operation.security?.length)
      responses[401] ??= { description: 'Missing or invalid credential', schema: ErrorBodyDto };
    if (operation.body) responses[415] ??= { description: 'The body is not JSON', schema: ErrorBodyDto };
    if (rateLimited) responses[429] ??= TOO_MANY_REQUESTS;
    // Any route that reaches the database can find it saturated or gone (DECISIONS.md section 4).
    responses[503] ??= {
      description:
        'The database (or another backing service) is unavailable or saturated; retry after Retry-After',
      schema: ErrorBodyDto,
    };
    // Id parameters must be UUIDs: anything else names no record (404), checked after `before`.
    const ids = uuidParams(operation.path);
    if (ids) responses[404] ??= ids.notFound;
    this.openapi.add({ ...operation, responses });

    const validators: RequestHandler[] = ids ? [ids.check] : [];
    const bodyDto = operation.body;
    if (bodyDto) {
      // A JSON route: a body of another type (a form, text) would read as no fields at all.
      validators.push((req, _res, next) => {
        const sent =
          req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
        if (sent && !req.is(['application/json', '+json'])) {
          throw new AppError(
            'unsupported_media_type',
            `This route takes a JSON body (Content-Type: application/json), not ${req.headers['content-type'] ?? 'an untyped body'}`,
          );
        }
        next();
      });
      validators.push(async (req, _res, next) => {
        req.body = await validateInput(bodyDto, req.body ?? {}, 'body', unknownFields);
        next();
      });
    }
    const queryDto = operation.query;
    if (queryDto) {
      validators.push(async (req, res, next) => {
        res.locals.query = await validateInput(queryDto, { ...req.query }, 'query', unknownFields);
        next();
      });
    }
    const answer: RequestHandler = async (req, res, next) => {
      // The validators above replaced the raw input with instances of the declared DTOs.
      const body: Body = req.body;
      const query = (queryDto ? res.locals.query : req.query) as Query;
      const input = { body, query, params: stringParams(req.params), req, res, next };
      const result = await handler(input);
      if (result !== undefined && result !== res && !res.headersSent) res.status(status).json(result);
    };
    const routeCors = cors ?? this.defaultCors;
    this.routes.push({
      method: operation.method,
      path: operation.path,
      handlers: [...(routeCors ? [routeCors] : []), ...before, ...validators, answer],
    });
    // A route's own CORS answers its path's preflight, whatever the path's other routes use.
    if (cors) this.preflights.set(operation.path, cors);
    else if (routeCors && !this.preflights.has(operation.path))
      this.preflights.set(operation.path, routeCors);
    return this;
  }

  /**
   * Registers every route on `app` behind one dispatching middleware, once the features are mounted
   * (so the middleware they installed runs before any route). express tries routes one by one, each a
   * regular expression: a request would be matched against every route declared before its own (the
   * serving route came ~70th). Routes are grouped by their literal first two path segments; a request
   * runs through the one group its path names, plus the routes without such a prefix, in declaration
   * order, so the route that answers is the one express alone would pick.
   */
  attach(app: Express): void {
    const options = {
      caseSensitive: Boolean(app.get('case sensitive routing')),
      strict: Boolean(app.get('strict routing')),
    };
    const keyed = this.routes.map((route) => ({
      route,
      key: routePrefix(route.path, options.caseSensitive),
    }));
    const routerOf = (key: string | null) => {
      const router = Router(options);
      for (const { route, key: own } of keyed) {
        if (own === null || own === key) router[route.method](route.path, ...route.handlers);
      }
      return router;
    };
    const groups = new Map<string, Router>();
    for (const { key } of keyed) if (key !== null && !groups.has(key)) groups.set(key, routerOf(key));
    const rest = keyed.some(({ key }) => key === null) ? routerOf(null) : null;
    // A CORS preflight (Origin and Access-Control-Request-Method) is the route's CORS middleware's;
    // a plain OPTIONS request is answered with Allow below.
    for (const [path, cors] of this.preflights) {
      app.options(path, (req, res, next) =>
        req.headers.origin && req.headers['access-control-request-method'] ? cors(req, res, next) : next(),
      );
    }
    const methods = this.allowed(options);
    app.use((req, res, next) => {
      // No route takes OPTIONS (the preflights of routes with CORS are answered above), and a router
      // would: it answers an OPTIONS request it has a path for with its own Allow list.
      if (req.method === 'OPTIONS') return methods(req, res, next);
      const router = groups.get(requestPrefix(req.path, options.caseSensitive)) ?? rest;
      if (router) router(req, res, (error?: unknown) => (error ? next(error) : methods(req, res, next)));
      else methods(req, res, next);
    });
  }

  /**
   * What a request no route answered gets when its path is a route's with other methods: 405 with
   * `Allow` (an OPTIONS request: 204 with `Allow`); any other path goes on (to the 404).
   */
  private allowed(options: { caseSensitive: boolean; strict: boolean }): RequestHandler {
    const byPath = new Map<string, Set<string>>();
    for (const { method, path } of this.routes) {
      const set = byPath.get(path) ?? new Set<string>();
      set.add(method.toUpperCase());
      if (method === 'get') set.add('HEAD');
      byPath.set(path, set);
    }
    const router = Router(options);
    for (const [path, set] of byPath) {
      const allow = [...set, 'OPTIONS'].join(', ');
      router.all(path, (req, res) => {
        res.setHeader('Allow', allow);
        if (req.method === 'OPTIONS') {
          res.status(204).end();
          return;
        }
        throw new AppError('method_not_allowed', `${req.method} is not allowed here; use ${allow}`);
      });
    }
    return router;
  }
}

/** A literal path segment: nothing express's path syntax gives a meaning to. */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** The first two segments of a route path when both are literal (the only one when it has one), else null. */
export function routePrefix(path: string, caseSensitive = false): string | null {
  const segments = path.split('/');
  if (segments[0] !== '') return null;
  const literal = segments.slice(1, 3);
  if (!literal.every((segment) => LITERAL_SEGMENT.test(segment))) return null;
  const prefix = `/${literal.join('/')}`;
  return caseSensitive ? prefix : prefix.toLowerCase();
}

/** What routePrefix gives the route that could match a request `path` (a trailing slash dropped). */
export function requestPrefix(path: string, caseSensitive = false): string {
  const first = path.indexOf('/', 1);
  const second = first < 0 ? -1 : path.indexOf('/', first + 1);
  let prefix = second < 0 ? path : path.slice(0, second);
  if (prefix.length > 1 && prefix.endsWith('/')) prefix = prefix.slice(0, -1);
  return caseSensitive ? prefix : prefix.toLowerCase();
}
