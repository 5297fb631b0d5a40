import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

/** Every `*.example.test` name resolves to this machine in the browser, so pages get origins of their own. */
const HOST_RULES = 'MAP *.example.test 127.0.0.1';

/**
 * Without these the browser's own background connections (updates, sync, QUIC probes) go to a
 * closed network and the machine refuses them; the profile is a fresh temporary folder per launch.
 */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--host-resolver-rules=${HOST_RULES}`,
];

const LAUNCH_MS = 30_000;
const NAVIGATION_MS = 15_000;
const STEP_MS = 20_000;

/** The browser build of @supabase/supabase-js (its UMD bundle defines the global `supabase`). */
const SUPABASE_UMD = join(dirname(require.resolve('@supabase/supabase-js')), 'umd/supabase.js');

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>app</title><script src="/supabase.js"></script></head>
<body>app</body></html>`;

/**
 * A web app's server: the same page under every path, with supabase-js loaded from `/supabase.js`.
 * It listens on one port; each host name under `.example.test` is a separate origin on it.
 */
export interface AppServer {
  port: number;
  /** `http://<host>:<port>`, the origin of the page served under that host name. */
  origin(host: string): string;
  stop(): Promise<void>;
}

export async function startAppServer(): Promise<AppServer> {
  const bundle = readFileSync(SUPABASE_UMD);
  const server = createServer((req, res) => {
    if (req.url === '/supabase.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    } else if (req.url === '/favicon.ico') {
      res.writeHead(204).end();
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: (host) => `http://${host}:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A loaded page: runs functions in it, each bounded in time. */
export interface AppPage {
  /**
   * `fn(arg)` evaluated in the page, its (JSON-like) result returned. `fn` is sent as source text: it
   * may use only its argument and the page's globals, never anything imported here.
   */
  run<A, R>(fn: (arg: A) => R | Promise<R>, arg: A, timeoutMs?: number): Promise<R>;
  /** What the page logged to its console so far (the browser reports CORS refusals there). */
  console(): string[];
}

export interface HeadlessChromium {
  /** A new page in a context of its own (no cookies or storage shared) at `url`, loaded. */
  open(url: string): Promise<AppPage>;
  /** Closes the browser; kills its process if it does not close in time. */
  close(): Promise<void>;
}

function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  // The losing promise may still reject later (the browser closing under it): nobody awaits it then.
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Debian's Chromium, headless, driven by playwright-core over the DevTools protocol. */
export async function startChromium(): Promise<HeadlessChromium> {
  if (!CHROMIUM) throw new Error('Chromium is not installed (apt-get install -y chromium)');
  // A browser server, not `launch`: it holds the process, so `close` can always kill it.
  const server = await chromium.launchServer({
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    timeout: LAUNCH_MS,
  });
  const browser = await chromium.connect(server.wsEndpoint(), { timeout: LAUNCH_MS }).catch(async (error) => {
    await server.kill();
    throw error;
  });
  const contexts: BrowserContext[] = [];
  return {
    async open(url) {
      const context = await browser.newContext();
      contexts.push(context);
      context.setDefaultTimeout(NAVIGATION_MS);
      const page = await context.newPage();
      const logged: string[] = [];
      page.on('console', (message) => logged.push(message.text()));
      page.on('pageerror', (error) => logged.push(`pageerror: ${error.message}`));
      await page.goto(url, { timeout: NAVIGATION_MS, waitUntil: 'load' });
      return {
        // Arguments are plain data, so playwright's Unboxed<A> is A itself.
        run: <A, R>(fn: (arg: A) => R | Promise<R>, arg: A, timeoutMs = STEP_MS) =>
          bounded(
            page.evaluate(fn as (arg: unknown) => R | Promise<R>, arg),
            timeoutMs,
            'a step in the page',
          ),
        console: () => [...logged],
      };
    },
    async close() {
      try {
        await bounded(
          Promise.all(contexts.map((c) => c.close()))
            .then(() => browser.close())
            .then(() => server.close()),
          10_000,
          'closing Chromium',
        );
      } finally {
        // No-op when it closed; otherwise the process (group) gets SIGKILL.
        await server.kill();
      }
    },
  };
}
