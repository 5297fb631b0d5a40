import { JwkSet, UpdateUserRequest, User } from '@hwp/contracts';
import { type AuthRouting, badInput, principal, TAGS } from './auth-routing';

export const getUser = (routing: AuthRouting) =>
  routing.signedInRoute({
    method: 'get',
    path: '/auth/user',
    summary: 'The signed-in user',
    responses: { 200: { description: 'The user (section 2.1)', schema: User } },
    handler: ({ req }) => routing.auth.getUser(principal(req).id),
  });

export const updateUser = (routing: AuthRouting) =>
  routing.signedInRoute({
    method: 'put',
    path: '/auth/user',
    summary: 'Change the password or the profile data of the signed-in user',
    description: 'A new password ends every other session of the user.',
    body: UpdateUserRequest,
    responses: { 200: { description: 'The updated user', schema: User }, 400: badInput },
    handler: ({ body, req }) => {
      const user = principal(req);
      return routing.auth.updateUser(user.id, user.sessionId, body);
    },
  });

/** The public keys, open to all and cacheable (no rate limit). */
export const jwks = (routing: AuthRouting) =>
  routing.api.route({
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'Public keys of the access-token signer (JWKS)',
    tags: TAGS,
    responses: { 200: { description: 'JWK set', schema: JwkSet } },
    handler: ({ res }) => {
      res.setHeader('Cache-Control', 'public, max-age=300');
      return { keys: routing.keys.jwks };
    },
  });
