import { CookieQuery, RefreshRequest } from '@hwp/contracts';
import { type AuthRouting, authResponses, refreshSession } from './auth-routing';

export const refresh = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'post',
    path: '/auth/refresh',
    summary: 'Exchange a refresh token for a new session (the token is single use)',
    description:
      'Reusing a rotated token outside the 10 s grace window revokes the whole session. Browser clients may send the refresh cookie (with the CSRF header) instead of a body.',
    body: RefreshRequest,
    query: CookieQuery,
    responses: authResponses,
    handler: ({ body, req, res }) => refreshSession(routing, req, res, body.refresh_token),
  });
