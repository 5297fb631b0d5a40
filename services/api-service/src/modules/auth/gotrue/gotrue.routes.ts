import {
  GoTrueEmpty,
  GoTrueErrorBody,
  GoTrueOtpRequest,
  GoTrueRecoverRequest,
  GoTrueResendRequest,
  GoTrueSession,
  GoTrueSignupRequest,
  GoTrueTokenQuery,
  GoTrueTokenRequest,
  GoTrueUpdateUserRequest,
  GoTrueVerifyRequest,
  type GoTrueVerifyType,
  JwkSet,
  LogoutQuery,
  User,
  type VerifyType,
} from '@hwp/contracts';
import {
  type ApiRouter,
  type RawQuery,
  type RouteSpec,
  shapeErrorsUnder,
  ValidationError,
} from '@hwp/platform';
import type { Express, Request, RequestHandler } from 'express';
import type { Authenticated } from '../auth.service';
import { pkceOf } from '../pkce.service';
import { type AuthRouteDeps, clientMeta, principal } from '../routes/auth-routing';
import { GOTRUE_API_VERSION, gotrueError } from './gotrue-errors';

export const GOTRUE_PREFIX = '/auth/v1';
const TAGS = ['auth (GoTrue)'];

/** GoTrue's `verify` types as the kinds of code this service issues. */
const PURPOSES: Record<GoTrueVerifyType, readonly VerifyType[]> = {
  email: ['magiclink', 'signup'],
  signup: ['signup'],
  magiclink: ['magiclink'],
  recovery: ['recovery'],
  sms: ['sms'],
  phone_change: ['sms'],
};

const errors = { description: 'GoTrue error body', schema: GoTrueErrorBody };
const sessionAnswer = { 200: { description: 'The session, flat, with the user', schema: GoTrueSession } };

/** The session as GoTrue sends it: the token fields flat, with the user. */
function flat(result: Pick<Authenticated, 'user' | 'session'>): GoTrueSession {
  return { ...result.session, user: result.user };
}

/** The address a GoTrue body names: email, else phone (400 when neither). */
function channelOf(body: { email?: string; phone?: string }): { email: string } | { phone: string } {
  if (body.email !== undefined) return { email: body.email };
  if (body.phone !== undefined) return { phone: body.phone };
  throw new ValidationError('email or phone is required', [{ field: 'email', message: 'is required' }]);
}

/** GoTrue takes the link's target as the `redirect_to` query parameter. */
function redirectOf(req: Request): string | undefined {
  const value = req.query.redirect_to;
  return typeof value === 'string' && value.length > 0 && value.length <= 2048 ? value : undefined;
}

const apiVersion: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Supabase-Api-Version', GOTRUE_API_VERSION);
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/**
 * The GoTrue (Supabase Auth) surface that `@supabase/supabase-js` calls at `<url>/auth/v1/*`,
 * beside the interface's own `/auth/*` routes: GoTrue's request and response shapes and error
 * body, unknown GoTrue fields ignored. Same accounts, sessions, limits and codes as `/auth/*`.
 */
export function mountGoTrueRoutes(api: ApiRouter, app: Express, deps: AuthRouteDeps): void {
  const { auth, sessions } = deps;
  shapeErrorsUnder(app, GOTRUE_PREFIX, gotrueError);
  const route = <Body, Query = RawQuery>(
    spec: Omit<RouteSpec<Body, Query>, 'tags' | 'path' | 'unknownFields' | 'before'> & {
      path: string;
      before?: RequestHandler[];
      signedIn?: boolean;
    },
  ) => {
    const { signedIn, before = [], path, ...rest } = spec;
    api.route<Body, Query>({
      ...rest,
      path: `${GOTRUE_PREFIX}${path}`,
      tags: TAGS,
      unknownFields: 'strip',
      rateLimited: true,
      before: [
        apiVersion,
        ...(signedIn ? [deps.authenticate, deps.standardLimit] : [deps.credentialLimit]),
        ...before,
      ],
      ...(signedIn ? { security: ['bearerAuth'] } : {}),
      responses: {
        400: errors,
        429: errors,
        503: errors,
        ...(signedIn ? { 401: errors } : {}),
        ...rest.responses,
      } as typeof rest.responses,
    });
  };

  route({
    method: 'post',
    path: '/signup',
    summary: 'GoTrue signup: the session (flat), or the user while the address awaits confirmation',
    body: GoTrueSignupRequest,
    responses: { 200: { description: 'Session with user, or the user alone', schema: GoTrueSession } },
    handler: async ({ body, req }) => {
      const result = await auth.signup(body, clientMeta(req), {
        redirectTo: redirectOf(req),
        pkce: pkceOf(body),
      });
      return result.session ? flat({ user: result.user, session: result.session }) : result.user;
    },
  });

  route({
    method: 'post',
    path: '/token',
    summary:
      'GoTrue token: grant_type=password (email or phone), refresh_token or pkce (auth_code + code_verifier)',
    query: GoTrueTokenQuery,
    body: GoTrueTokenRequest,
    before: deps.loginLimits,
    responses: sessionAnswer,
    handler: async ({ body, query, req }) => {
      if (query.grant_type === 'refresh_token') {
        if (!body.refresh_token) {
          throw new ValidationError('refresh_token is required', [
            { field: 'refresh_token', message: 'is required' },
          ]);
        }
        const { user, issued } = await sessions.refresh(body.refresh_token);
        return flat({ user: await auth.getUser(user.id), session: issued.session });
      }
      if (query.grant_type === 'pkce') {
        if (!body.auth_code || !body.code_verifier) {
          throw new ValidationError('auth_code and code_verifier are required', [
            { field: body.auth_code ? 'code_verifier' : 'auth_code', message: 'is required' },
          ]);
        }
        return flat(await auth.exchangePkce(body.auth_code, body.code_verifier, clientMeta(req)));
      }
      const channel = channelOf(body);
      if (body.password === undefined) {
        throw new ValidationError('password is required', [{ field: 'password', message: 'is required' }]);
      }
      return flat(await auth.loginWithPassword(channel, body.password, clientMeta(req)));
    },
  });

  route({
    method: 'post',
    path: '/otp',
    summary: 'GoTrue OTP: email a code and link, or text a code; an unknown address gets an account',
    body: GoTrueOtpRequest,
    responses: { 200: { description: 'Sent (the same answer for every address)', schema: GoTrueEmpty } },
    handler: async ({ body, req }) => {
      const channel = channelOf(body);
      await auth.sendPasswordless(channel, redirectOf(req), {
        createUser: body.create_user,
        data: body.data,
        pkce: pkceOf(body),
      });
      return {};
    },
  });

  route({
    method: 'post',
    path: '/verify',
    summary:
      'GoTrue verify: a code with its address (types email, signup, magiclink, recovery, sms, phone_change)',
    body: GoTrueVerifyRequest,
    responses: { ...sessionAnswer, 401: errors },
    handler: async ({ body, req }) =>
      flat(
        await auth.verify(
          {
            type: PURPOSES[body.type],
            email: body.email,
            phone: body.phone,
            token: body.token,
            tokenHash: body.token_hash,
          },
          clientMeta(req),
        ),
      ),
  });

  route({
    method: 'post',
    path: '/resend',
    summary: "GoTrue resend: a signup's confirmation code again (auth-js `resend()`)",
    description:
      'The same answer for every address: only a signup awaiting confirmation gets a fresh code. ' +
      '`email_change` and `phone_change` send nothing (this host offers no email or phone change).',
    body: GoTrueResendRequest,
    responses: { 200: { description: 'Sent (if a confirmation is pending)', schema: GoTrueEmpty } },
    handler: async ({ body, req }) => {
      await auth.resend(body.type, body, redirectOf(req));
      return {};
    },
  });

  route({
    method: 'post',
    path: '/recover',
    summary: 'GoTrue recover: email a password-recovery code and link',
    body: GoTrueRecoverRequest,
    responses: { 200: { description: 'Sent (if the account exists)', schema: GoTrueEmpty } },
    handler: async ({ body, req }) => {
      await auth.recover(body.email, redirectOf(req), pkceOf(body));
      return {};
    },
  });

  route({
    method: 'get',
    path: '/user',
    summary: 'GoTrue user: the signed-in user',
    signedIn: true,
    responses: { 200: { description: 'The user', schema: User } },
    handler: ({ req }) => auth.getUser(principal(req).id),
  });

  route({
    method: 'put',
    path: '/user',
    summary: 'GoTrue user update: password and data (user_metadata, merged; null removes a key)',
    description: 'Changing the email address or phone number is not offered here (400).',
    signedIn: true,
    body: GoTrueUpdateUserRequest,
    responses: { 200: { description: 'The updated user', schema: User } },
    handler: ({ body, req }) => {
      const user = principal(req);
      if (body.email !== undefined && body.email.toLowerCase() !== user.email.toLowerCase()) {
        throw new ValidationError('Changing the email address is not offered', [
          { field: 'email', message: 'cannot be changed' },
        ]);
      }
      if (body.phone !== undefined && body.phone !== user.phone) {
        throw new ValidationError('Changing the phone number is not offered', [
          { field: 'phone', message: 'cannot be changed' },
        ]);
      }
      return auth.updateUser(user.id, user.sessionId, { password: body.password, data: body.data });
    },
  });

  route({
    method: 'post',
    path: '/logout',
    summary: 'GoTrue logout: scope global (default), local or others',
    signedIn: true,
    query: LogoutQuery,
    responses: { 204: { description: 'Signed out' } },
    handler: async ({ query, req, res }) => {
      const user = principal(req);
      await sessions.revoke(user.id, user.sessionId, query.scope ?? 'global');
      res.status(204).end();
    },
  });

  api.route({
    method: 'get',
    path: `${GOTRUE_PREFIX}/.well-known/jwks.json`,
    summary: 'Public keys of the access-token signer (what auth-js getClaims() reads)',
    tags: TAGS,
    // A hostile query is refused with 400 in GoTrue's shape here too (errors under the prefix).
    responses: { 200: { description: 'JWK set', schema: JwkSet }, 400: errors },
    handler: ({ res }) => {
      res.setHeader('Cache-Control', 'public, max-age=300');
      return { keys: deps.keys.jwks };
    },
  });
}
