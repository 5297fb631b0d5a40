import {
  CookieQuery,
  MessageResponse,
  PhoneOtpRequest,
  VerifyPhoneOtpRequest,
  VerifyRequest,
} from '@hwp/contracts';
import { type AuthRouting, clientMeta, codeResponses, sendAuthenticated, wantsCookies } from './auth-routing';

export const phoneOtp = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'post',
    path: '/auth/phone-otp',
    summary: 'Text a one-time sign-in code',
    body: PhoneOtpRequest,
    responses: { 200: { description: 'Sent (if the number can receive it)', schema: MessageResponse } },
    handler: ({ body }) => routing.auth.sendPasswordless({ phone: body.phone_number }),
  });

export const verifyPhoneOtp = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'post',
    path: '/auth/verify-phone-otp',
    summary: 'Redeem a phone one-time code',
    body: VerifyPhoneOtpRequest,
    query: CookieQuery,
    responses: codeResponses,
    handler: async ({ body, req, res }) => {
      const code = { type: 'sms' as const, phone: body.phone_number, token: body.token };
      const result = await routing.auth.verify(code, clientMeta(req));
      sendAuthenticated(res, routing.cookies, result, wantsCookies(req));
    },
  });

export const verifyCode = (routing: AuthRouting) =>
  routing.openRoute({
    method: 'post',
    path: '/auth/verify',
    summary: 'Redeem a magic-link, signup, recovery or SMS code',
    description:
      'Give `email` (or `phone` for `sms`) with the 6-digit `token`, or the `token_hash` of the link.',
    body: VerifyRequest,
    query: CookieQuery,
    responses: codeResponses,
    handler: async ({ body, req, res }) => {
      const result = await routing.auth.verify(
        {
          type: body.type,
          email: body.email,
          phone: body.phone,
          token: body.token,
          tokenHash: body.token_hash,
        },
        clientMeta(req),
      );
      sendAuthenticated(res, routing.cookies, result, wantsCookies(req));
    },
  });
