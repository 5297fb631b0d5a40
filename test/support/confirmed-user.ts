import { codeIn, type FakeSmtp, uniqueEmail } from '@hwp/platform/test-kit';

/**
 * A user signed up and confirmed over HTTP the way a browser does it against a production-mode API
 * host (GoTrue routes, the code read from the email), with the session's access token.
 */
export async function confirmedUser(
  apiBase: string,
  smtp: FakeSmtp,
  prefix: string,
): Promise<{ token: string; email: string }> {
  const email = uniqueEmail(prefix);
  const post = (path: string, body: unknown) =>
    fetch(`${apiBase}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  expect((await post('/auth/v1/signup', { email, password: 'correct horse battery' })).status).toBe(200);
  const code = codeIn(await smtp.nextMessage(email));
  const verified = await post('/auth/v1/verify', { type: 'email', email, token: code });
  expect(verified.status).toBe(200);
  return { token: ((await verified.json()) as { access_token: string }).access_token, email };
}
