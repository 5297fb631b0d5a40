import { EmailCodeRequest, MessageResponse, ResendRequest, VerifyLinkQuery } from '@hwp/contracts';
import { AppError } from '@hwp/platform';
import { type AuthRouting, clientMeta } from './auth-routing';

export const magicLink = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'post',
    path: '/auth/magic-link',
    summary: 'Email a sign-in code and link',
    description: 'Always 200 with the same message; a second request within 60 s answers 429.',
    body: EmailCodeRequest,
    responses: { 200: { description: 'Sent (if the address can receive it)', schema: MessageResponse } },
    handler: ({ body }) => routing.auth.sendPasswordless({ email: body.email }, body.redirect_to),
  });

export const verifyLink = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'get',
    path: '/auth/verify',
    summary: 'The link of a magic-link, signup or recovery email',
    description:
      'Redirects (303) to `redirect_to` (an allowed origin, else the site) with the session in the URL fragment, or with `error` and `error_code` in the fragment when the link is void. When the request that sent the link carried a PKCE code challenge (`/auth/v1`), the redirect carries `?code=` instead, for `POST /auth/v1/token?grant_type=pkce`.',
    query: VerifyLinkQuery,
    responses: {
      303: {
        description: 'Redirect with `#access_token=...&refresh_token=...` or `#error=...`',
        headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } },
      },
    },
    handler: async ({ query, req, res }) => {
      res.setHeader('Cache-Control', 'no-store');
      try {
        const result = await routing.auth.openLink(
          { type: query.type, tokenHash: query.token },
          clientMeta(req),
        );
        const target = result.redirectTo ?? routing.siteUrl;
        if ('authCode' in result) {
          // A PKCE flow (GoTrue): the code in the query; only the holder of the verifier can use it.
          const url = new URL(target);
          url.hash = '';
          url.searchParams.set('code', result.authCode);
          res.redirect(303, url.toString());
          return;
        }
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
        res.redirect(303, `${routing.siteUrl.split('#')[0]}#${fragment}`);
      }
    },
  });

export const recover = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'post',
    path: '/auth/recover',
    summary: 'Email a password-recovery code and link',
    description:
      'Always 200 with the same message. Redeem with POST /auth/verify type=recovery, then PUT /auth/user.',
    body: EmailCodeRequest,
    responses: { 200: { description: 'Sent (if the account exists)', schema: MessageResponse } },
    handler: ({ body }) => routing.auth.recover(body.email, body.redirect_to),
  });

export const resend = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'post',
    path: '/auth/resend',
    summary: "Send a signup's confirmation code again",
    description:
      'Always 200 with the same message: an address whose signup awaits confirmation gets a fresh code ' +
      '(`signup` by email, `sms` by phone); an unknown or confirmed address gets nothing. A second request ' +
      'within 60 s answers 429, for every address. This host offers no email or phone change, so ' +
      '`email_change` and `phone_change` never send anything.',
    body: ResendRequest,
    responses: { 200: { description: 'Sent (if a confirmation is pending)', schema: MessageResponse } },
    handler: ({ body }) => routing.auth.resend(body.type, body, body.redirect_to),
  });
