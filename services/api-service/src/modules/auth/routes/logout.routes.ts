import { LogoutQuery } from '@hwp/contracts';
import { clearSessionCookies } from '../authenticate';
import { type AuthRouting, principal } from './auth-routing';

export const logout = (routing: AuthRouting) =>
  routing.signedInRoute({
    method: 'post',
    path: '/auth/logout',
    summary:
      'End all sessions of the user (scope=global, the default, as GoTrue), this one (local) or the others',
    description:
      'Their refresh tokens stop working at once, their access tokens within SESSION_CHECK_CACHE_MS here and ' +
      'within seconds on the collaboration host (`session.revoked.v1`).',
    query: LogoutQuery,
    responses: { 204: { description: 'Signed out' } },
    handler: async ({ query, req, res }) => {
      const user = principal(req);
      await routing.sessions.revoke(user.id, user.sessionId, query.scope ?? 'global');
      clearSessionCookies(res, routing.cookies);
      res.status(204).end();
    },
  });
