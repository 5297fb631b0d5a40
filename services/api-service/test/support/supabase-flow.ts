import { codeIn, uniqueEmail } from '@hwp/platform/test-kit';
import { AuthApiError, GoTrueClient } from '@supabase/auth-js';
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';

const PASSWORD = 'correct horse battery';
const options = { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false };

/**
 * What an app written for Supabase Auth does on day one, with `@supabase/supabase-js` and
 * `@supabase/auth-js` unchanged, against an API host at `baseUrl` with email confirmation on:
 * signUp + verifyOtp, password sign-in, refresh, getUser, updateUser, OTP sign-in, getClaims and
 * signOut. `mailbox` reads the newest message of a template sent to an address. (Node 20 has no
 * WebSocket global: supabase-js's realtime client is handed `ws`; it opens no socket here.)
 */
export async function supabaseClientFlow(
  baseUrl: string,
  mailbox: (email: string, template: string) => Promise<{ text: string }>,
): Promise<void> {
  const client = createClient(baseUrl, 'anon-key', {
    auth: options,
    realtime: { transport: WebSocket as never },
  });
  const email = uniqueEmail('gotrue');

  const signedUp = await client.auth.signUp({
    email,
    password: PASSWORD,
    options: { data: { team: 'mech' } },
  });
  expect(signedUp.error).toBeNull();
  expect(signedUp.data.session).toBeNull();
  expect(signedUp.data.user).toMatchObject({ email, user_metadata: { team: 'mech' } });

  const refused = await client.auth.signInWithPassword({ email, password: PASSWORD });
  expect(refused.error).toMatchObject({ code: 'email_not_confirmed', status: 400 });

  const code = codeIn(await mailbox(email, 'signup'));
  const verified = await client.auth.verifyOtp({ email, token: code, type: 'email' });
  expect(verified.error).toBeNull();
  expect(verified.data.session?.access_token).toEqual(expect.any(String));
  expect(verified.data.user?.email_confirmed_at).toEqual(expect.any(String));

  const wrong = await client.auth.signInWithPassword({ email, password: 'not the password' });
  expect(wrong.error).toMatchObject({ code: 'invalid_credentials', status: 400 });

  const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
  expect(signedIn.error).toBeNull();
  const session = signedIn.data.session;
  expect(session).toMatchObject({ token_type: 'bearer', user: { email } });
  expect(session?.expires_at).toEqual(expect.any(Number));

  const refreshed = await client.auth.refreshSession();
  expect(refreshed.error).toBeNull();
  expect(refreshed.data.session?.refresh_token).not.toBe(session?.refresh_token);

  const current = await client.auth.getUser();
  expect(current.error).toBeNull();
  expect(current.data.user).toMatchObject({ email, user_metadata: { team: 'mech' } });

  const updated = await client.auth.updateUser({ data: { team: 'firmware', first_name: 'Ada' } });
  expect(updated.error).toBeNull();
  expect(updated.data.user?.user_metadata).toEqual({ team: 'firmware', first_name: 'Ada' });

  const claims = await client.auth.getClaims();
  expect(claims.error).toBeNull();
  expect(claims.data?.claims).toMatchObject({ email, role: 'authenticated', aud: 'authenticated' });

  await client.auth.signOut();
  const afterSignOut = await client.auth.getSession();
  expect(afterSignOut.data.session).toBeNull();

  // Passwordless with auth-js directly: the emailed code signs in.
  const auth = new GoTrueClient({ url: `${baseUrl}/auth/v1`, ...options });
  const sent = await auth.signInWithOtp({ email });
  expect(sent.error).toBeNull();
  const otp = codeIn(await mailbox(email, 'magiclink'));
  const byOtp = await auth.verifyOtp({ email, token: otp, type: 'email' });
  expect(byOtp.error).toBeNull();
  expect(byOtp.data.user?.email).toBe(email);
  const again = await auth.verifyOtp({ email, token: otp, type: 'email' });
  expect(again.error).toBeInstanceOf(AuthApiError);
  expect(again.error).toMatchObject({ code: 'otp_expired' });
  await auth.signOut({ scope: 'global' });
  const revoked = await fetch(`${baseUrl}/auth/v1/user`, {
    headers: { Authorization: `Bearer ${byOtp.data.session?.access_token}` },
  });
  expect(revoked.status).toBe(401);
  expect(await revoked.json()).toMatchObject({ code: 'session_not_found', error_code: 'session_not_found' });
}
