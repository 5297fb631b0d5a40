import {
  CookieQuery,
  ErrorBodyDto,
  LoginRequest,
  PhoneLoginRequest,
  SignupRequest,
  SignupResponse,
  TokenQuery,
  TokenRequest,
} from '@hwp/contracts';
import { ValidationError } from '@hwp/platform';
import {
  type AuthRouting,
  authResponses,
  clientMeta,
  passwordLogin,
  refreshSession,
  sendAuthenticated,
  wantsCookies,
} from './auth-routing';

export const signup = (routing: AuthRouting) =>
  routing.openRoute({
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
    handler: async ({ body, req, res }) => {
      const result = await routing.auth.signup(body, clientMeta(req));
      if (!result.session || !result.sessionId) return { user: result.user, session: null };
      const session = { user: result.user, session: result.session, sessionId: result.sessionId };
      sendAuthenticated(res, routing.cookies, session, wantsCookies(req));
    },
  });

export const login = (routing: AuthRouting) =>
  routing.loginRoute({
    method: 'post',
    path: '/auth/login',
    summary: 'Log in with email and password',
    description:
      'A failed login answers 400 `invalid_credentials` whether or not the account exists. `?cookie=true` also sets HttpOnly session cookies.',
    body: LoginRequest,
    query: CookieQuery,
    responses: authResponses,
    handler: ({ body, req, res }) => passwordLogin(routing, req, res, { email: body.email }, body.password),
  });

export const phoneLogin = (routing: AuthRouting) =>
  routing.loginRoute({
    method: 'post',
    path: '/auth/phone-login',
    summary: 'Log in with phone number and password',
    body: PhoneLoginRequest,
    query: CookieQuery,
    responses: authResponses,
    handler: ({ body, req, res }) =>
      passwordLogin(routing, req, res, { phone: body.phone_number }, body.password),
  });

export const token = (routing: AuthRouting) =>
  routing.loginRoute({
    method: 'post',
    path: '/auth/token',
    summary: 'GoTrue-compatible token endpoint: grant_type=password or refresh_token',
    query: TokenQuery,
    body: TokenRequest,
    responses: authResponses,
    handler: async ({ body, query, req, res }) => {
      if (query.grant_type === 'refresh_token') return refreshSession(routing, req, res, body.refresh_token);
      const { email, phone, password } = body;
      if (!password || (email === undefined) === (phone === undefined)) {
        throw new ValidationError('grant_type=password needs password and one of email or phone', [
          { field: 'password', message: 'required with email or phone' },
        ]);
      }
      const channel = email !== undefined ? { email } : { phone: phone ?? '' };
      return passwordLogin(routing, req, res, channel, password);
    },
  });
