import { rmSync } from 'node:fs';
import { expectEventually } from '@hwp/platform/test-kit';
import { SseClient } from '#collab-test/sse-client';
import {
  embeddedDataDir,
  freePort,
  SCRIPTS,
  type ServiceProcess,
  spawnService,
  waitForStatus,
} from './process-kit';

const USERS = 10;
const CONCURRENCY = 50;
const MIXED_REQUESTS = 420;
const PASSWORD = 'concurrent password';

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: bodies of a dozen routes, each checked field by field below
  body: any;
}

interface TestUser {
  n: number;
  email: string;
  id: string;
  tenantId: string;
  token: string;
  workspace: string;
  partIds: string[];
  importIds: string[];
  stream?: SseClient;
}

/** At most `limit` tasks at once, like 50 browsers hammering one server. */
function limiter(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/**
 * The embedded default under concurrent users, right after start (issue: PGlite interleaved the
 * extended-protocol batches of different connections and answered with another user's data). Every
 * answer is checked against the user who asked: ids in every body, streams carrying only the own
 * workspace's events; and nothing may be 5xx or an unexpected 4xx.
 */
describe('embedded default under 50 concurrent requests from several users', () => {
  const dataDir = embeddedDataDir('hwp-embedded-load-');
  let proc: ServiceProcess | undefined;
  let api = '';
  let collab = '';
  const failures: string[] = [];
  let requests = 0;

  async function call(
    base: string,
    method: string,
    path: string,
    options: { token?: string; json?: unknown; form?: FormData; expect?: number } = {},
  ): Promise<Answer> {
    requests++;
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: options.form ?? (options.json === undefined ? undefined : JSON.stringify(options.json)),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text for the failure message
    }
    const expected =
      options.expect ?? (method === 'POST' && base === collab && path === '/v1/parts' ? 201 : 200);
    if (res.status !== expected)
      failures.push(`${method} ${path}: ${res.status} (expected ${expected}) ${text.slice(0, 300)}`);
    return { status: res.status, body };
  }

  function check(condition: boolean, what: string): void {
    if (!condition) failures.push(what);
  }

  async function mailboxCode(email: string): Promise<string> {
    return expectEventually(
      async () => {
        const { body } = await call(api, 'GET', `/dev/mailbox?to=${encodeURIComponent(email)}`);
        for (const item of body.items as { to: string }[])
          check(item.to === email, `mailbox of ${email} holds mail to ${item.to}`);
        const match = /\b(\d{6})\b/.exec(body.items[0]?.text ?? '');
        if (!match) throw new Error('no code yet');
        return match[1];
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
  }

  /** Signup, the emailed code, verification, workspace and two parts: one user's first minutes. */
  async function onboard(n: number, run: ReturnType<typeof limiter>): Promise<TestUser> {
    const email = `load-${n}@example.test`;
    const signup = await run(() =>
      call(api, 'POST', '/auth/signup', { json: { email, password: PASSWORD } }),
    );
    check(signup.body.user?.email === email, `signup of ${email} answered for ${signup.body.user?.email}`);
    const code = await mailboxCode(email);
    const verified = await run(() =>
      call(api, 'POST', '/auth/verify', { json: { type: 'signup', email, token: code } }),
    );
    const id = verified.body.user.id as string;
    check(verified.body.user.email === email, `verify of ${email} answered for ${verified.body.user.email}`);
    const token = verified.body.session.access_token as string;
    const tenant = await run(() => call(api, 'GET', '/tenant/current', { token }));
    await run(() => call(collab, 'POST', '/v1/users/init', { token, json: {} }));
    const workspace = `load-ws-${n}`;
    await run(() =>
      call(collab, 'POST', '/v1/workspaces', { token, json: { name: workspace }, expect: 201 }),
    );
    const user: TestUser = {
      n,
      email,
      id,
      tenantId: tenant.body.id,
      token,
      workspace,
      partIds: [],
      importIds: [],
    };
    user.stream = await SseClient.open(collab, `/v1/events?workspace=${workspace}`, token);
    check(user.stream.status === 200, `event stream of ${email}: ${user.stream.status}`);
    for (let i = 0; i < 2; i++) await createPart(user, run);
    return user;
  }

  async function createPart(user: TestUser, run: ReturnType<typeof limiter>): Promise<void> {
    const partNumber = `U${user.n}-${user.partIds.length + 1}-${Math.random().toString(36).slice(2, 8)}`;
    const { body } = await run(() =>
      call(collab, 'POST', '/v1/parts', {
        token: user.token,
        json: { workspace: user.workspace, partNumber, name: `Bracket of user ${user.n}` },
      }),
    );
    check(
      body.workspace === user.workspace && body.partNumber === partNumber,
      `part create of ${user.email} answered ${JSON.stringify(body).slice(0, 200)}`,
    );
    if (body.id) user.partIds.push(body.id);
  }

  /** One request of the mixed load, checked against the user who sent it. */
  function mixedRequest(
    user: TestUser,
    other: TestUser,
    k: number,
    run: ReturnType<typeof limiter>,
  ): Promise<void> {
    const kind = k % 11;
    return run(async () => {
      switch (kind) {
        case 0: {
          const { body } = await call(api, 'GET', '/auth/user', { token: user.token });
          check(body.id === user.id, `/auth/user of ${user.email} answered ${body.id}`);
          return;
        }
        case 1: {
          const { body } = await call(api, 'GET', '/tenant/current', { token: user.token });
          check(body.id === user.tenantId, `/tenant/current of ${user.email} answered tenant ${body.id}`);
          return;
        }
        case 2: {
          const { body } = await call(api, 'GET', '/profile', { token: user.token });
          check(
            body.id === user.id && body.email === user.email,
            `/profile of ${user.email} answered ${body.email}`,
          );
          return;
        }
        case 3: {
          const login = await call(api, 'POST', '/auth/login', {
            json: { email: user.email, password: PASSWORD },
          });
          check(login.body.user?.id === user.id, `login of ${user.email} answered ${login.body.user?.id}`);
          const refreshed = await call(api, 'POST', '/auth/refresh', {
            json: { refresh_token: login.body.session?.refresh_token },
          });
          check(
            refreshed.body.user?.id === user.id,
            `refresh of ${user.email} answered ${refreshed.body.user?.id}`,
          );
          return;
        }
        case 4:
          return createPart(user, (task) => task());
        case 5: {
          const { body } = await call(collab, 'GET', `/v1/parts?workspace=${user.workspace}&q=U${user.n}-`, {
            token: user.token,
          });
          for (const part of body.items ?? []) {
            check(
              part.workspace === user.workspace && part.partNumber.startsWith(`U${user.n}-`),
              `search of ${user.email} returned ${part.partNumber} of ${part.workspace}`,
            );
          }
          check(
            (body.items ?? []).length >= 2,
            `search of ${user.email} found ${(body.items ?? []).length} parts`,
          );
          return;
        }
        case 6: {
          const id = user.partIds[k % user.partIds.length];
          const { body } = await call(collab, 'GET', `/v1/parts/${id}?workspace=${user.workspace}`, {
            token: user.token,
          });
          check(
            body.id === id && body.workspace === user.workspace,
            `part ${id} of ${user.email} answered ${body.id} in ${body.workspace}`,
          );
          return;
        }
        case 7: {
          const { body } = await call(api, 'GET', `/dev/mailbox?to=${encodeURIComponent(user.email)}`);
          for (const item of body.items ?? [])
            check(item.to === user.email, `mailbox of ${user.email} holds mail to ${item.to}`);
          return;
        }
        case 8: {
          // Imports, dry runs and applies (COPY on the embedded server) of every user at once.
          const apply = Math.floor(k / 11) % 2 === 0;
          const form = new FormData();
          form.set('workspace', user.workspace);
          form.set(
            'file',
            new Blob([`pn,name\nI${user.n}-${k}-1,Imported bolt\nI${user.n}-${k}-2,Imported nut\n`], {
              type: 'text/csv',
            }),
            'parts.csv',
          );
          const { body } = await call(collab, 'POST', `/v1/parts/import?dryRun=${!apply}`, {
            token: user.token,
            form,
          });
          check(
            body.rows === 2 && body.dryRun === !apply && body.created === 2 && body.errorCount === 0,
            `import of ${user.email}: ${JSON.stringify(body).slice(0, 200)}`,
          );
          if (body.importId) user.importIds.push(body.importId);
          if (apply) {
            const found = await call(
              collab,
              'GET',
              `/v1/parts?workspace=${user.workspace}&q=I${user.n}-${k}-`,
              {
                token: user.token,
              },
            );
            check(
              found.body.total === 2 &&
                found.body.items.every((p: { workspace: string }) => p.workspace === user.workspace),
              `imported parts of ${user.email}: ${JSON.stringify(found.body).slice(0, 200)}`,
            );
          }
          return;
        }
        case 9: {
          // Another user's workspace: not a member, so it does not exist for this user.
          const { body } = await call(collab, 'GET', `/v1/parts?workspace=${other.workspace}`, {
            token: user.token,
            expect: 404,
          });
          check(
            body.code === 'not_found',
            `foreign workspace for ${user.email}: ${JSON.stringify(body).slice(0, 200)}`,
          );
          return;
        }
        default: {
          // A fresh visitor signs up while the others work; the mail is checked after the run.
          const email = `visitor-${user.n}-${k}@example.test`;
          visitors.push(email);
          const { body } = await call(api, 'POST', '/auth/signup', { json: { email, password: PASSWORD } });
          check(body.user?.email === email, `signup of ${email} answered for ${body.user?.email}`);
        }
      }
    });
  }
  const visitors: string[] = [];

  afterAll(() => {
    proc?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers every user about themselves only, with no 5xx, and shuts down cleanly', async () => {
    const ports = { api: await freePort(), collab: await freePort() };
    api = `http://127.0.0.1:${ports.api}`;
    collab = `http://127.0.0.1:${ports.collab}`;
    proc = spawnService(SCRIPTS.embedded, {
      API_PORT: String(ports.api),
      COLLAB_PORT: String(ports.collab),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      // All users share 127.0.0.1: the per-IP limit of anonymous requests is not what is tested here.
      RATE_LIMIT_STANDARD_PER_WINDOW: '100000',
    });
    await waitForStatus(`${api}/healthz`, 200, 60_000, proc);
    await waitForStatus(`${collab}/healthz`, 200, 60_000, proc);

    const run = limiter(CONCURRENCY);
    const users = await Promise.all(Array.from({ length: USERS }, (_, n) => onboard(n, run)));
    const load: Promise<void>[] = [];
    for (let k = 0; k < MIXED_REQUESTS; k++) {
      const user = users[(k * 7) % USERS];
      load.push(mixedRequest(user, users[(k * 7 + 1) % USERS], k, run));
    }
    await Promise.all(load);
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThanOrEqual(500);

    // Every signup's email reached the dev mailbox (the message path kept up with the load).
    await expectEventually(
      async () => {
        for (const email of visitors) {
          const res = await fetch(`${api}/dev/mailbox?to=${encodeURIComponent(email)}`);
          const body = (await res.json()) as { items: { to: string }[] };
          expect(body.items.map((i) => i.to)).toEqual([email]);
        }
      },
      // Only a bound for a path that must get there; a loaded machine may need a while.
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // Each stream carried its own imports' progress (sent to the importer only) and nobody else's.
    for (const user of users) {
      const stream = user.stream as SseClient;
      expect(user.importIds.length).toBeGreaterThan(0);
      await expectEventually(
        async () => {
          const done = stream.events.filter(
            (e) => e.type === 'import.progress' && (e.data as { phase: string }).phase === 'done',
          );
          expect(done.map((e) => (e.data as { importId: string }).importId).sort()).toEqual(
            [...user.importIds].sort(),
          );
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      expect(stream.events.filter((e) => e.workspace !== user.workspace)).toEqual([]);
      stream.close();
    }

    proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      proc.exited,
      new Promise((resolve) => {
        timer = setTimeout(() => resolve('still running after 30 s'), 30_000);
      }),
    ]);
    clearTimeout(timer);
    expect(exit).toBe(0);
    expect(proc.output()).not.toMatch(/"level":(50|60)/);
  }, 240_000);
});
