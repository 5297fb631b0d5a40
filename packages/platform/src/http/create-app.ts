import { HealthResponse, ReadinessResponse } from '@hwp/contracts';
import express, { type Express } from 'express';
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

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  jsonLimitBytes: number;
  openapi: OpenApiInfo;
  readiness: Record<string, ReadinessCheck>;
  /** Adds the feature routes; everything registered on `api` lands in the OpenAPI document. */
  mount: (api: ApiRouter, app: Express) => void;
  /** Path prefixes whose bodies are streamed by their handlers (never parsed as JSON). */
  rawBodyPrefixes?: string[];
  /** express's `trust proxy` (TRUST_PROXY): whose X-Forwarded-For names the client; default nobody. */
  trustProxy?: false | number | string[];
  /** Per-check timeout of /readyz. */
  readinessTimeoutMs?: number;
}

async function withTimeout(check: ReadinessCheck, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    clearTimeout(timer);
  }
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
  app.use(helmet());
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
    handler: (_req, res) => {
      res.json({ status: 'ok', service: options.service });
    },
  });
  api.route({
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: database and broker reachable',
    tags: ['operations'],
    responses: {
      200: { description: 'Every dependency answered', schema: ReadinessResponse },
      503: { description: 'A dependency is unreachable; `checks` names it', schema: ReadinessResponse },
    },
    handler: async (_req, res) => {
      const names = Object.keys(options.readiness);
      const results = await Promise.all(names.map((name) => withTimeout(options.readiness[name], timeout)));
      const checks = Object.fromEntries(names.map((name, i) => [name, results[i]]));
      const ready = results.every((r) => r === 'ok');
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks });
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
