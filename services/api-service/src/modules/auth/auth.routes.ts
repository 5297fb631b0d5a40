import {
  AuthResponse,
  CookieQuery,
  EmailCodeRequest,
  ErrorBodyDto,
  JwkSet,
  LoginRequest,
  LogoutQuery,
  MessageResponse,
  PhoneLoginRequest,
  PhoneOtpRequest,
  RefreshRequest,
  SignupRequest,
  SignupResponse,
  TokenQuery,
  TokenRequest,
  UpdateUserRequest,
  User,
  VerifyLinkQuery,
  VerifyPhoneOtpRequest,
  VerifyRequest,
} from '@hwp/contracts';
import { type ApiRouter, AppError, type RouteSpec, UnauthorizedError, ValidationError } from '@hwp/platform';
import type { Request, RequestHandler, Response } from 'express';
import type { Authenticated, AuthService } from './auth.service';
import {
  COOKIES,
  type CookieSettings,
  checkCsrf,
  clearSessionCookies,
  type Principal,
  setSessionCookies,
} from './authenticate';
import type { ClientMeta, SessionsService } from './sessions.service';
import type { SigningKeys } from './signing-keys';

export interface AuthRouteDeps {
  auth: AuthService;
  sessions: SessionsService;
  keys: SigningKeys;
  cookies: CookieSettings;
  authenticate: RequestHandler;
  /** Standard per-client limit (60/min). */
  standardLimit: RequestHandler;
  /** Failed-login limits per account and per IP. */
  loginLimits: RequestHandler[];
  /** Where GET /auth/verify lands when the link carries no allowed redirect. */
  siteUrl: string;
}

const BEARER = ['bearerAuth'];
const TAGS = ['auth'];
const badInput = { description: 'Invalid input', schema: ErrorBodyDto };

function clientMeta(req: Request): ClientMeta {
  return { ip: req.ip, userAgent: req.get('user-agent') };
}

function principal(req: Request): Principal {
  if (!req.user) throw new UnauthorizedError();
  return req.user;
}

function wantsCookies(req: Request): boolean {
  return (req.query as { cookie?: string }).cookie === 'true';
}

/** Sends `{ user, session }`, and sets the session cookies when the client asked for them. */
function sendAuthenticated(
  req: Request,
  res: Response,
  cookies: CookieSettings,
  result: Authenticated,
  forceCookies = false,
): void {
  if (forceCookies || wantsCookies(req)) {
    setSessionCookies(res, cookies, {
      sessionId: result.sessionId,
      accessToken: result.session.access_token,
      refreshToken: result.session.refresh_token,
      expiresIn: result.session.expires_in,
    });
  }
  res.setHeader('Cache-Control', 'no-store');
  res.json({ user: result.user, session: result.session });
}

/** The auth routes of section 4.1 and DECISIONS.md section 1 (GoTrue-compatible where silent). */
export function mountAuthRoutes(api: ApiRouter, deps: AuthRouteDeps): void {
  const { auth, sessions, cookies } = deps;
  const open = [deps.standardLimit];
  const login = [deps.standardLimit, ...deps.loginLimits];
  const signedIn = [deps.authenticate, deps.standardLimit];
  const authResponses = { 200: { description: '`{ user, session }`', schema: AuthResponse } };
  const codeResponses = {
    ...authResponses,
    401: {
      description: '`otp_invalid`, or `otp_expired` (expired, used or 5 wrong tries)',
      schema: ErrorBodyDto,
    },
  };
  /** Every auth route but the JWKS: tagged, rate limited, behind the given middleware. */
  const routeBehind =
    (before: RequestHandler[], security?: string[]) =>
    (spec: Omit<RouteSpec, 'before' | 'tags' | 'rateLimited'>) =>
      api.route({ tags: TAGS, rateLimited: true, before, ...(security ? { security } : {}), ...spec });
  const openRoute = routeBehind(open);
  const loginRoute = routeBehind(login);
  const signedInRoute = routeBehind(signedIn, BEARER);

  const passwordLogin = async (
    req: Request,
    res: Response,
    channel: { email: string } | { phone: string },
  ) => {
    const { password } = req.body as { password: string };
    sendAuthenticated(req, res, cookies, await auth.loginWithPassword(channel, password, clientMeta(req)));
  };

  /** The refresh token from the body, or from the refresh cookie (then CSRF-checked). */
  const refresh = async (req: Request, res: Response, bodyToken: string | undefined) => {
    let token = bodyToken;
    const viaCookie = !token;
    if (!token) {
      token = (req.cookies as Record<string, string> | undefined)?.[COOKIES.refresh];
      if (!token)
        throw new ValidationError('refresh_token is required', [
          { field: 'refresh_token', message: 'required' },
        ]);
      const sessionId = await sessions.sessionOfRefreshToken(token);
      if (!sessionId) throw new UnauthorizedError('Invalid refresh token: not found');
      checkCsrf(req, sessionId, cookies.secret);
    }
    const { user, issued } = await sessions.refresh(token);
    const view = await auth.getUser(user.id);
    const result = { user: view, session: issued.session, sessionId: issued.sessionId };
    sendAuthenticated(req, res, cookies, result, viaCookie);
  };

  openRoute({
    method: 'post',
    path: '/auth/signup',
    summary: 'Create an account with email or phone and a password',
    description:
      'Answers `{ user, session }`, or `{ user, session: null }` while the email or phone awaits confirmation ' +
      '(AUTH_REQUIRE_CONFIRMATION, on by default). With confirmation on, an address that already has a confirmed ' +
      'account answers exactly as a new one (200, an obfuscated user with a fresh id, no session, as GoTrue): that ' +
      'account is left unchanged and its owner gets a `signup_attempt` message instead of a code. With confirmation ' +
      'off, such a signup answers 409 `email_exists` / `phone_exists` (GoTrue also answers an error there). A second ' +
      'signup for one address within 60 s answers 429, registered or not.',
    body: SignupRequest,
    query: CookieQuery,
    responses: {
      200: {
        description: 'Account created, or awaiting confirmation (also for an already registered address)',
        schema: SignupResponse,
      },
      409: {
        description: '`email_exists` / `phone_exists`: only while confirmation is switched off',
        schema: ErrorBodyDto,
      },
    },
    handler: async (req, res) => {
      const result = await auth.signup(req.body, clientMeta(req));
      if (result.session && result.sessionId) {
        sendAuthenticated(req, res, cookies, {
          user: result.user,
          session: result.session,
          sessionId: result.sessionId,
        });
      } else {
        res.json({ user: result.user, session: null });
      }
    },
  });

  loginRoute({
    method: 'post',
    path: '/auth/login',
    summary: 'Log in with email and password',
    description:
      'A failed login answers 400 `invalid_credentials` whether or not the account exists. `?cookie=true` also sets HttpOnly session cookies.',
    body: LoginRequest,
    query: CookieQuery,
    responses: authResponses,
    handler: (req, res) => passwordLogin(req, res, { email: (req.body as LoginRequest).email }),
  });

  loginRoute({
    method: 'post',
    path: '/auth/phone-login',
    summary: 'Log in with phone number and password',
    body: PhoneLoginRequest,
    query: CookieQuery,
    responses: authResponses,
    handler: (req, res) => passwordLogin(req, res, { phone: (req.body as PhoneLoginRequest).phone_number }),
  });

  loginRoute({
    method: 'post',
    path: '/auth/token',
    summary: 'GoTrue-compatible token endpoint: grant_type=password or refresh_token',
    query: TokenQuery,
    body: TokenRequest,
    responses: authResponses,
    handler: async (req, res) => {
      const body = req.body as TokenRequest;
      if ((res.locals.query as TokenQuery).grant_type === 'refresh_token')
        return refresh(req, res, body.refresh_token);
      if (!body.password || (body.email === undefined) === (body.phone === undefined)) {
        throw new ValidationError('grant_type=password needs password and one of email or phone', [
          { field: 'password', message: 'required with email or phone' },
        ]);
      }
      return passwordLogin(
        req,
        res,
        body.email !== undefined ? { email: body.email } : { phone: body.phone as string },
      );
    },
  });

  openRoute({
    method: 'post',
    path: '/auth/refresh',
    summary: 'Exchange a refresh token for a new session (the token is single use)',
    description:
      'Reusing a rotated token outside the 10 s grace window revokes the whole session. Browser clients may send the refresh cookie (with the CSRF header) instead of a body.',
    body: RefreshRequest,
    query: CookieQuery,
    responses: authResponses,
    handler: (req, res) => refresh(req, res, (req.body as RefreshRequest).refresh_token),
  });

  openRoute({
    method: 'post',
    path: '/auth/magic-link',
    summary: 'Email a sign-in code and link',
    description: 'Always 200 with the same message; a second request within 60 s answers 429.',
    body: EmailCodeRequest,
    responses: { 200: { description: 'Sent (if the address can receive it)', schema: MessageResponse } },
    handler: async (req, res) => {
      const body = req.body as EmailCodeRequest;
      res.json(await auth.sendPasswordless({ email: body.email }, body.redirect_to));
    },
  });

  openRoute({
    method: 'post',
    path: '/auth/phone-otp',
    summary: 'Text a one-time sign-in code',
    body: PhoneOtpRequest,
    responses: { 200: { description: 'Sent (if the number can receive it)', schema: MessageResponse } },
    handler: async (req, res) => {
      res.json(await auth.sendPasswordless({ phone: (req.body as PhoneOtpRequest).phone_number }));
    },
  });

  openRoute({
    method: 'post',
    path: '/auth/verify-phone-otp',
    summary: 'Redeem a phone one-time code',
    body: VerifyPhoneOtpRequest,
    query: CookieQuery,
    responses: codeResponses,
    handler: async (req, res) => {
      const body = req.body as VerifyPhoneOtpRequest;
      const result = await auth.verify(
        { type: 'sms', phone: body.phone_number, token: body.token },
        clientMeta(req),
      );
      sendAuthenticated(req, res, cookies, result);
    },
  });

  openRoute({
    method: 'post',
    path: '/auth/verify',
    summary: 'Redeem a magic-link, signup, recovery or SMS code',
    description:
      'Give `email` (or `phone` for `sms`) with the 6-digit `token`, or the `token_hash` of the link.',
    body: VerifyRequest,
    query: CookieQuery,
    responses: codeResponses,
    handler: async (req, res) => {
      const body = req.body as VerifyRequest;
      const result = await auth.verify(
        {
          type: body.type,
          email: body.email,
          phone: body.phone,
          token: body.token,
          tokenHash: body.token_hash,
        },
        clientMeta(req),
      );
      sendAuthenticated(req, res, cookies, result);
    },
  });

  openRoute({
    method: 'get',
    path: '/auth/verify',
    summary: 'The link of a magic-link, signup or recovery email',
    description:
      'Redirects (303) to `redirect_to` (an allowed origin, else the site) with the session in the URL fragment, or with `error` and `error_code` in the fragment when the link is void.',
    query: VerifyLinkQuery,
    responses: {
      303: {
        description: 'Redirect with `#access_token=...&refresh_token=...` or `#error=...`',
        headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } },
      },
    },
    handler: async (req, res) => {
      const query = res.locals.query as VerifyLinkQuery;
      res.setHeader('Cache-Control', 'no-store');
      try {
        const result = await auth.verify({ type: query.type, tokenHash: query.token }, clientMeta(req));
        const target = result.redirectTo ?? deps.siteUrl;
        const fragment = new URLSearchParams({
          access_token: result.session.access_token,
          expires_at: String(result.session.expires_at),
          expires_in: String(result.session.expires_in),
          refresh_token: result.session.refresh_token,
          token_type: 'bearer',
          type: query.type,
        });
        res.redirect(303, `${target.split('#')[0]}#${fragment}`);
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        const fragment = new URLSearchParams({
          error: 'access_denied',
          error_code: error.code,
          error_description: error.detail,
        });
        res.redirect(303, `${deps.siteUrl.split('#')[0]}#${fragment}`);
      }
    },
  });

  openRoute({
    method: 'post',
    path: '/auth/recover',
    summary: 'Email a password-recovery code and link',
    description:
      'Always 200 with the same message. Redeem with POST /auth/verify type=recovery, then PUT /auth/user.',
    body: EmailCodeRequest,
    responses: { 200: { description: 'Sent (if the account exists)', schema: MessageResponse } },
    handler: async (req, res) => {
      const body = req.body as EmailCodeRequest;
      res.json(await auth.recover(body.email, body.redirect_to));
    },
  });

  signedInRoute({
    method: 'post',
    path: '/auth/logout',
    summary:
      'End all sessions of the user (scope=global, the default, as GoTrue), this one (local) or the others',
    description:
      'Their refresh tokens stop working at once, their access tokens within SESSION_CHECK_CACHE_MS here and ' +
      'within seconds on the collaboration host (`session.revoked.v1`).',
    query: LogoutQuery,
    responses: { 204: { description: 'Signed out' } },
    handler: async (req, res) => {
      const user = principal(req);
      await sessions.revoke(user.id, user.sessionId, (res.locals.query as LogoutQuery).scope ?? 'global');
      clearSessionCookies(res, cookies);
      res.status(204).end();
    },
  });

  signedInRoute({
    method: 'get',
    path: '/auth/user',
    summary: 'The signed-in user',
    responses: { 200: { description: 'The user (section 2.1)', schema: User } },
    handler: async (req, res) => {
      res.json(await auth.getUser(principal(req).id));
    },
  });

  signedInRoute({
    method: 'put',
    path: '/auth/user',
    summary: 'Change the password or the profile data of the signed-in user',
    description: 'A new password ends every other session of the user.',
    body: UpdateUserRequest,
    responses: { 200: { description: 'The updated user', schema: User }, 400: badInput },
    handler: async (req, res) => {
      const user = principal(req);
      res.json(await auth.updateUser(user.id, user.sessionId, req.body as UpdateUserRequest));
    },
  });

  api.route({
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'Public keys of the access-token signer (JWKS)',
    tags: TAGS,
    responses: { 200: { description: 'JWK set', schema: JwkSet } },
    handler: (_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.json({ keys: deps.keys.jwks });
    },
  });
}
