import type { PlatformDeps } from '../deps';
import type { ApiRouter } from '../http/api-router';
import { requireOpsToken } from './ops-auth';

/**
 * `GET /metrics`: the Prometheus text exposition of this instance, behind OPS_TOKEN like the other
 * operator routes (open without a token in development, absent in production without one).
 */
export function mountMetrics(api: ApiRouter, deps: PlatformDeps): void {
  api.route({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics of this instance (text exposition format 0.0.4)',
    description:
      'Request latency by route template and status, outbox backlog and the age of its oldest event, publishes ' +
      'and deliveries per queue by outcome, dead letters, open SSE streams, job durations (imports, processing, ' +
      'translations), event-loop lag, heap and the database pool. Every name starts with `hwp_`.',
    tags: ['operations'],
    security: ['opsToken'],
    before: [requireOpsToken(deps.config.OPS_TOKEN, deps.config.NODE_ENV === 'production')],
    responses: {
      200: {
        description: 'The metrics',
        contentType: 'text/plain',
        schema: { type: 'string' },
      },
    },
    handler: async ({ res }) => {
      const { contentType, body } = await deps.metrics.text();
      res.status(200).type(contentType).send(body);
      return res;
    },
  });
}
