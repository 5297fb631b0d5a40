import type { ApiRouter } from '@hwp/platform';
import { type AuthRouteDeps, authRouting } from './routes/auth-routing';
import { logout } from './routes/logout.routes';
import { magicLink, recover, resend, verifyLink } from './routes/magic-link.routes';
import { phoneOtp, verifyCode, verifyPhoneOtp } from './routes/otp.routes';
import { login, phoneLogin, signup, token } from './routes/password.routes';
import { refresh } from './routes/refresh.routes';
import { getUser, jwks, updateUser } from './routes/user.routes';

export type { AuthRouteDeps } from './routes/auth-routing';

/**
 * The auth routes of section 4.1 and DECISIONS.md section 1 (GoTrue-compatible where silent), one
 * file per use case under routes/. The order is the order of the OpenAPI document.
 */
export function mountAuthRoutes(api: ApiRouter, deps: AuthRouteDeps): void {
  const routing = authRouting(api, deps);
  for (const mount of [
    signup,
    login,
    phoneLogin,
    token,
    refresh,
    magicLink,
    phoneOtp,
    verifyPhoneOtp,
    verifyCode,
    verifyLink,
    recover,
    resend,
    logout,
    getUser,
    updateUser,
    jwks,
  ]) {
    mount(routing);
  }
}
