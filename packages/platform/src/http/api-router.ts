import { ErrorBodyDto } from '@hwp/contracts';
import { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import type { OpenApiBuilder, OperationSpec, ResponseSpec } from './openapi';
import { validateInput } from './validation';

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

export interface RouteSpec extends OperationSpec {
  /** Runs before validation (authentication, role checks, rate limits, multer). */
  before?: RequestHandler[];
  /** A limiter from createRateLimiter is in `before`: documents the 429 answer. */
  rateLimited?: boolean;
  handler: (req: Request, res: Response, next: NextFunction) => unknown;
}

/**
 * The only way features add routes: each route is registered on the express router AND in the
 * host's OpenAPI document, with body/query validation from the same DTO classes.
 */
export class ApiRouter {
  readonly router: Router = Router();

  constructor(private readonly openapi: OpenApiBuilder) {}

  route(spec: RouteSpec): this {
    const { before = [], handler, rateLimited, ...operation } = spec;
    const responses = { ...operation.responses };
    // Every operation can fail with the shared error body; document it once here.
    if (operation.body || operation.query)
      responses[400] ??= { description: 'Invalid input', schema: ErrorBodyDto };
    if (operation.security?.length)
      responses[401] ??= { description: 'Missing or invalid credential', schema: ErrorBodyDto };
    if (rateLimited) responses[429] ??= TOO_MANY_REQUESTS;
    this.openapi.add({ ...operation, responses });

    const validators: RequestHandler[] = [];
    if (operation.body) {
      const dto = operation.body;
      validators.push(async (req, _res, next) => {
        req.body = await validateInput(dto, req.body ?? {}, 'body');
        next();
      });
    }
    if (operation.query) {
      const dto = operation.query;
      validators.push(async (req, res, next) => {
        res.locals.query = await validateInput(dto, { ...req.query }, 'query');
        next();
      });
    }
    this.router[operation.method](operation.path, ...before, ...validators, async (req, res, next) => {
      await handler(req, res, next);
    });
    return this;
  }
}
