import { HealthResponse, ReadinessResponse } from '@hwp/contracts';
import express, { type Express, type RequestHandler } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import swaggerUi from 'swagger-ui-express';
import { redactUrl } from '../logger';
import { ApiRouter } from './api-router';
import { errorMiddleware, notFoundHandler } from './error-middleware';
import { rejectHostileInput } from './hostile-input';
import { OpenApiBuilder, type OpenApiInfo } from './openapi';
import { requestContext } from './request-context';

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
  /** Runs first on every request (the metrics' request timer). */
  requestMetrics?: RequestHandler;
  /** Per-check timeout of /readyz. */
  readinessTimeoutMs?: number;
  /**
   * Whether clients reach the service over https (PUBLIC_BASE_URL's scheme). Only then are HSTS and
   * CSP `upgrade-insecure-requests` sent: on plain http they make browsers fetch `/docs`' assets
   * over https, which a plain-http host does not serve.
   */
  servedOverHttps?: boolean;
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

  if (options.requestMetrics) app.use(options.requestMetrics);
  app.use(requestContext());
  app.use(
    pinoHttp({
      logger: options.logger,
      genReqId: (req) => String(req.id),
      customAttributeKeys: { reqId: 'requestId' },
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
      customLogLevel: (_req, res, error) =>
        error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (req: { method: string; url: string }) => ({ method: req.method, url: redactUrl(req.url) }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  const https = options.servedOverHttps ?? false;
  app.use(
    helmet({
      strictTransportSecurity: https,
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
    }),
  );
  const json = express.json({ limit: options.jsonLimitBytes });
  const raw = options.rawBodyPrefixes ?? [];
  app.use((req, res, next) =>
    raw.some((prefix) => req.path.startsWith(prefix)) ? next() : json(req, res, next),
  );
  app.use(rejectHostileInput());

  const openapi = new OpenApiBuilder(options.openapi);
  const api = new ApiRouter(openapi);
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
  app.use(api.router);

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
