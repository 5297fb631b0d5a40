import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { codeIn, type FakeSmtp, startFakeSmtp, uniqueEmail } from '@hwp/platform/test-kit';
import type { SupabaseClient } from '@supabase/supabase-js';
import {
  type AppServer,
  CHROMIUM,
  type HeadlessChromium,
  startAppServer,
  startChromium,
} from '#test/chromium';
import { confirmedUser } from '#test/confirmed-user';
import { type Gateway, startGateway } from '#test/nginx-gateway';
import { startTwoServices, type TwoServices } from '#test/two-services';
import { embeddedDataDir, freePort } from './process-kit';

/**
 * Issue 35, acceptance 3, in a real browser (Debian's headless Chromium): a web app served from its
 * own origin uses @supabase/supabase-js's browser bundle against the API host, and through the
 * compose gateway (real nginx) uploads a large file by pre-signed URL. Everything the browser
 * enforces and Node does not is in play: CORS preflights for supabase-js's headers, which response
 * headers a page may read (ETag, X-Tenant-ID), and the origin of the URLs the hosts hand out.
 */

/** The global the UMD bundle defines; the page functions below run in the browser, not here. */
declare const supabase: typeof import('@supabase/supabase-js');
type PageGlobals = { sb: SupabaseClient };

const PASSWORD = 'correct horse battery';

interface PageError {
  name: string;
  message: string;
  status?: number;
  code?: string;
}

/** In the page: a supabase-js client on `base`, kept in `globalThis.sb` for the next steps. */
function createPageClient(base: string): void {
  (globalThis as unknown as PageGlobals).sb = supabase.createClient(base, 'anon-key', {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  });
}

/** In the page: one `sb.auth` call by name, its error flattened (the class does not cross over). */
async function authCall(input: { method: string; args: unknown[] }) {
  const auth = (globalThis as unknown as PageGlobals).sb.auth as unknown as Record<
    string,
    (...args: unknown[]) => Promise<{ data: unknown; error: PageError | null }>
  >;
  const { data, error } = await auth[input.method](...input.args);
  return {
    data: JSON.parse(JSON.stringify(data)) as {
      user?: { email?: string; email_confirmed_at?: string | null };
      session?: { access_token: string; refresh_token: string } | null;
    },
    error: error && { name: error.name, message: error.message, status: error.status, code: error.code },
  };
}

(CHROMIUM ? describe : describe.skip)('a browser app on another origin', () => {
  const blobDir = embeddedDataDir('hwp-browser-blobs-');
  let smtp: FakeSmtp;
  let app: AppServer;
  let services: TwoServices;
  let gateway: Gateway;
  let browser: HeadlessChromium;
  let gatewayUrl: string;
  let appOrigin: string;

  beforeAll(async () => {
    [smtp, app, browser] = await Promise.all([
      startFakeSmtp('mailer', 'browser'),
      startAppServer(),
      startChromium(),
    ]);
    appOrigin = app.origin('app.example.test');
    const gatewayPort = await freePort();
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    services = await startTwoServices({
      name: 'browser',
      env: {
        TRUST_PROXY: '1',
        PUBLIC_BASE_URL: gatewayUrl,
        PUBLIC_API_URL: gatewayUrl,
        PUBLIC_COLLAB_URL: gatewayUrl,
        SITE_URL: appOrigin,
        CORS_ORIGINS: appOrigin,
      },
      apiEnv: { SMTP_URL: smtp.url, BLOB_DIR: join(blobDir, 'api') },
      collabEnv: { BLOB_DIR: join(blobDir, 'collab') },
    });
    gateway = await startGateway({
      gateway: gatewayPort,
      api: services.apiPort,
      collab: services.collabPort,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await services?.stop();
    await app?.stop();
    await smtp?.stop();
  });

  it('signs up, confirms, signs in, refreshes and reads the user with supabase-js', async () => {
    const page = await browser.open(`${appOrigin}/`);
    const email = uniqueEmail('browser');
    await page.run(createPageClient, services.apiUrl);
    const call = (method: string, ...args: unknown[]) => page.run(authCall, { method, args });

    const signedUp = await call('signUp', { email, password: PASSWORD });
    expect(signedUp.error).toBeNull();
    expect(signedUp.data.user?.email).toBe(email);
    expect(signedUp.data.session).toBeNull();
    const code = codeIn(await smtp.nextMessage(email));
    const verified = await call('verifyOtp', { email, token: code, type: 'email' });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email_confirmed_at).toEqual(expect.any(String));

    const signedIn = await call('signInWithPassword', { email, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    const first = signedIn.data.session;
    expect(first?.access_token).toEqual(expect.any(String));
    const refreshed = await call('refreshSession');
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session?.refresh_token).not.toBe(first?.refresh_token);
    const current = await call('getUser');
    expect(current.error).toBeNull();
    expect(current.data.user?.email).toBe(email);

    // The refreshed access token opens the host's own API, and the page may read its exposed headers.
    const files = await page.run(
      async ({ base, token }) => {
        const res = await fetch(`${base}/files`, { headers: { authorization: `Bearer ${token}` } });
        return { status: res.status, tenant: res.headers.get('x-tenant-id') };
      },
      { base: services.apiUrl, token: refreshed.data.session?.access_token ?? '' },
    );
    expect(files).toEqual({ status: 200, tenant: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(page.console().join('\n')).not.toMatch(/CORS/);
  });

  it('is refused by the browser for a page whose origin CORS_ORIGINS does not list', async () => {
    const { email } = await confirmedUser(services.apiUrl, smtp, 'browser-other');
    const page = await browser.open(`${app.origin('elsewhere.example.test')}/`);
    await page.run(createPageClient, services.apiUrl);
    const signIn = await page.run(authCall, {
      method: 'signInWithPassword',
      args: [{ email, password: PASSWORD }],
    });
    // The request itself is fine (Node signed in above): only the browser's CORS check fails it.
    expect(signIn.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 0 });
    expect(signIn.data.session).toBeNull();
    expect(page.console().join('\n')).toMatch(/blocked by CORS policy/);
  });

  it('through the gateway, uploads by a pre-signed URL naming the gateway and downloads the same bytes', async () => {
    const { email } = await confirmedUser(gatewayUrl, smtp, 'browser-upload');
    const page = await browser.open(`${appOrigin}/`);
    await page.run(createPageClient, gatewayUrl);
    const signedIn = await page.run(authCall, {
      method: 'signInWithPassword',
      args: [{ email, password: PASSWORD }],
    });
    expect(signedIn.error).toBeNull();
    const content = randomBytes(300 * 1024);

    const result = await page.run(
      async ({ base, token, name, base64 }) => {
        const auth = { authorization: `Bearer ${token}` };
        const json = { ...auth, 'content-type': 'application/json' };
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        const started = await fetch(`${base}/files/upload-url`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ name, size: bytes.length }),
        });
        const upload = (await started.json()) as {
          upload_id: string;
          parts: { part_number: number; url: string }[];
        };
        const puts: { status: number; etag: string | null }[] = [];
        for (const part of upload.parts) {
          const put = await fetch(part.url, { method: 'PUT', body: bytes });
          puts.push({ status: put.status, etag: put.headers.get('etag') });
        }
        const completed = await fetch(`${base}/files/upload-complete`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({
            upload_id: upload.upload_id,
            parts: upload.parts.map((p, i) => ({ part_number: p.part_number, etag: puts[i].etag })),
          }),
        });
        const file = (await completed.json()) as { id: string; name: string; size: number };
        const download = await fetch(`${base}/files/${file.id}/download`, { headers: auth });
        const downloaded = new Uint8Array(await download.arrayBuffer());
        let binary = '';
        for (const byte of downloaded) binary += String.fromCharCode(byte);
        return {
          started: started.status,
          urls: upload.parts.map((p) => p.url),
          puts,
          completed: completed.status,
          file,
          downloaded: download.status,
          base64: btoa(binary),
        };
      },
      {
        base: gatewayUrl,
        token: signedIn.data.session?.access_token ?? '',
        name: 'browser-upload.bin',
        base64: content.toString('base64'),
      },
    );

    expect(result.started).toBe(201);
    expect(result.urls).toHaveLength(1);
    const partUrl = new URL(result.urls[0]);
    expect([partUrl.origin, partUrl.pathname]).toEqual([gatewayUrl, expect.stringMatching(/^\/blobs\//)]);
    expect(result.puts).toEqual([{ status: 200, etag: expect.stringMatching(/^".+"$/) }]);
    expect(result.completed).toBe(201);
    expect(result.file).toMatchObject({ name: 'browser-upload.bin', size: content.length });
    expect(result.downloaded).toBe(200);
    expect(Buffer.from(result.base64, 'base64').equals(content)).toBe(true);
    // Every request of the flow went through nginx to the API host.
    expect(gateway.upstreams('/blobs/')).toEqual(expect.arrayContaining([`127.0.0.1:${services.apiPort}`]));
    expect(page.console().join('\n')).not.toMatch(/CORS/);
  });
});
