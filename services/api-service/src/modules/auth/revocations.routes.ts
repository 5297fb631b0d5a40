import { RevokedSessionList } from '@hwp/contracts';
import type { ApiRouter } from '@hwp/platform';
import type { RequestHandler } from 'express';
import type { DataSource } from 'typeorm';
import type { SessionRevocations } from './session-revocations';

/**
 * `GET /auth/sessions/revoked`: public like the JWKS (session ids are no secret; a token of the
 * session is what counts). The collaboration host reads it at start and when it may have missed
 * `session.revoked.v1`, so it never trusts a token of an ended session.
 */
export function mountRevocationRoutes(
  api: ApiRouter,
  dataSource: DataSource,
  revocations: SessionRevocations,
  limit: RequestHandler,
): void {
  api.route({
    method: 'get',
    path: '/auth/sessions/revoked',
    summary: 'Ended sessions whose access tokens may still be unexpired',
    description:
      'Services that verify access tokens from the JWKS alone refuse tokens whose `session_id` is listed, ' +
      'until `expires_at`. Live changes arrive as `session.revoked.v1` events.',
    tags: ['auth'],
    // Public, and its answer grows with the sessions ended in the last token lifetime: rate limited
    // per client (a collaboration replica reads it every 30 s).
    rateLimited: true,
    before: [limit],
    responses: { 200: { description: 'The list', schema: RevokedSessionList } },
    handler: ({ res }) => {
      res.setHeader('Cache-Control', 'no-store');
      return revocations.list(dataSource);
    },
  });
}
