import { HealthResponse, ReadinessResponse } from '@hwp/contracts';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import swaggerUi from 'swagger-ui-express';
import { ApiRouter } from './api-router';
import { apiCors } from './cors';
import { errorMiddleware, notFoundHandler } from './error-middleware';
import { rejectHostileInput } from './hostile-input';
import { OpenApiBuilder, type OpenApiInfo } from './openapi';
import { type ResponseObserver, requestContext } from './request-context';

/** A dependency /readyz checks; throws (or rejects) when it is not reachable. */
export type ReadinessCheck = () => Promise<void>;

/**
 * Something /readyz reports without taking the instance out of rotation: resolves null when all is
 * well, or why it works poorly (reported as `degraded: <why>`, status `degraded`, still 200).
 */
export type DegradationCheck = () => Promise<string | null>;

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  jsonLimitBytes: number;
  openapi: OpenApiInfo;
  readiness: Record<string, ReadinessCheck>;
  /** Checks whose failure degrades the service without making it unavailable (the bus). */
  degradation?: Record<string, DegradationCheck>;
  /** Adds the feature routes; everything registered on `api` lands in the OpenAPI document. */
  mount: (api: ApiRouter, app: Express) => void;
  /** Path prefixes whose bodies are streamed by their handlers (never parsed as JSON). */
  rawBodyPrefixes?: string[];
  /** express's `trust proxy` (TRUST_PROXY): whose X-Forwarded-For names the client; default nobody. */
  trustProxy?: false | number | string[];
  /** Told of every finished response (the request metrics). */
  requestMetrics?: ResponseObserver;
  /** Origins whose browser pages may call every route (CORS); empty: no CORS headers at all. */
  corsOrigins?: string[];
  /** Per-check timeout of /readyz. */
  readinessTimeoutMs?: number;
  /**
   * Whether clients reach the service over https (its public URL's scheme). Only then are HSTS and
   * CSP `upgrade-insecure-requests` sent: on plain http they make browsers fetch `/docs`' assets
   * over https, which a plain-http host does not serve.
   */
  servedOverHttps?: boolean;
}

/**
 * The security headers of API responses (JSON and file bytes), set in one pass. A JSON answer loads
 * nothing and is never framed, so the OWASP REST set suffices; the document-only headers of helmet
 * (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control, X-Download-Options, ...) are sent with the one
 * HTML page, /docs, by helmet itself. Routes that serve stored bytes set their own sandboxing CSP.
 */
export function apiSecurityHeaders(https: boolean): [string, string][] {
  const headers: [string, string][] = [
    ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
    ['X-Content-Type-Options', 'nosniff'],
    ['X-Frame-Options', 'DENY'],
    ['Referrer-Policy', 'no-referrer'],
  ];
  if (https) headers.push(['Strict-Transport-Security', 'max-age=31536000; includeSubDomains']);
  return headers;
}

/** Whether a request carries a body (body-parser's test): a GET without one skips the JSON parser. */
function hasBody(req: { headers: Record<string, unknown> }): boolean {
  return req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;
}

async function withTimeout<T>(
  check: () => Promise<T>,
  ms: number,
): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const value = await Promise.race([
      check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message || error.name : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

async function runReadiness(check: ReadinessCheck, ms: number): Promise<string> {
  const result = await withTimeout(check, ms);
  return result.ok ? 'ok' : result.error;
}

async function runDegradation(check: DegradationCheck, ms: number): Promise<string> {
  const result = await withTimeout(check, ms);
  if (!result.ok) return `degraded: not checked: ${result.error}`;
  return result.value === null ? 'ok' : `degraded: ${result.value}`;
}

/**
 * The express app every service is built on: request id and logging, helmet, the JSON limit,
 * health and readiness, OpenAPI and /docs, the features, then the 404 and the error middleware.
 * It never listens: main.ts (or a test) does that.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy ?? false);
  app.set('query parser', 'extended');

  const https = options.servedOverHttps ?? false;
  app.use(
    requestContext({
      logger: options.logger,
      quietPaths: ['/healthz', '/readyz'],
      observe: options.requestMetrics,
      headers: apiSecurityHeaders(https),
    }),
  );
  const json = express.json({ limit: options.jsonLimitBytes });
  const raw = options.rawBodyPrefixes ?? [];
  const hostile = rejectHostileInput();
  // One hop for both: the JSON body (when there is one and the path is not streamed), then its check.
  app.use((req, res, next) =>
    !hasBody(req) || raw.some((prefix) => req.path.startsWith(prefix))
      ? hostile(req, res, next)
      : json(req, res, (error?: unknown) => (error ? next(error) : hostile(req, res, next))),
  );

  const openapi = new OpenApiBuilder(options.openapi);
  const api = new ApiRouter(openapi, apiCors(options.corsOrigins ?? []));
  const timeout = options.readinessTimeoutMs ?? 2_000;

  api.route({
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process is up',
    tags: ['operations'],
    responses: { 200: { description: 'Up', schema: HealthResponse } },
    handler: () => ({ status: 'ok', service: options.service }),
  });
  api.route({
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: database, broker and storage reachable; events flowing',
    description:
      'Each dependency check (`database`, `broker`, `storage`) is `ok` or its failure; any failure answers 503 ' +
      '`unavailable`. The `bus` check is `ok` or `degraded: <why>` (an unpublished outbox event or a ' +
      "consumer's message older than BUS_DEGRADED_AFTER_MS, or a consumer not attached): the answer stays " +
      '200, with status `degraded`, so the instance is not taken out of rotation for it.',
    tags: ['operations'],
    responses: {
      200: {
        description:
          'Every dependency answered: `ready`, or `degraded` when a quality check (the bus) is not ok',
        schema: ReadinessResponse,
      },
      503: {
        description: 'A dependency is unreachable (`unavailable`); `checks` names it',
        schema: ReadinessResponse,
      },
    },
    handler: async ({ res }) => {
      const names = Object.keys(options.readiness);
      const soft = Object.keys(options.degradation ?? {});
      const [results, softResults] = await Promise.all([
        Promise.all(names.map((name) => runReadiness(options.readiness[name], timeout))),
        Promise.all(soft.map((name) => runDegradation(options.degradation![name], timeout))),
      ]);
      const checks = Object.fromEntries([
        ...names.map((name, i) => [name, results[i]]),
        ...soft.map((name, i) => [name, softResults[i]]),
      ]);
      const status = !results.every((r) => r === 'ok')
        ? 'unavailable'
        : softResults.every((r) => r === 'ok')
          ? 'ready'
          : 'degraded';
      res.status(status === 'unavailable' ? 503 : 200).json({ status, checks });
    },
  });

  options.mount(api, app);
  api.attach(app);

  let document: Record<string, unknown> | undefined;
  const getDocument = () => {
    document ??= openapi.build();
    return document;
  };
  app.get('/openapi.json', (_req, res) => {
    res.json(getDocument());
  });
  app.use(
    '/docs',
    helmet({
      strictTransportSecurity: https,
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
    }),
    swaggerUi.serve,
    swaggerUi.setup(undefined, {
      customSiteTitle: `${options.openapi.title} API`,
      swaggerOptions: { url: '/openapi.json' },
    }),
  );

  app.use(notFoundHandler());
  app.use(errorMiddleware(options.logger));
  return app;
}
