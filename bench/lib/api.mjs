// Shared by the benches of the API host: the built service in its own process, a signed-up user.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, sleep } from './collab.mjs';
import { throwawayDatabase } from './postgres.mjs';

/**
 * The API host from dist on a throwaway Postgres database and the in-process bus, with `env` on
 * top (S3_*, limits). Returns its URL and pid, `signUp()` for a user's access token, and `stop()`.
 */
export async function startApiProcess(env = {}) {
  const db = await throwawayDatabase('bench_api');
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-api-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, [join(root, 'services/api-service/dist/main.js')], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      AUTH_REQUIRE_CONFIRMATION: 'false',
      RATE_LIMIT_STANDARD_PER_WINDOW: '1000000',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {}
    if (i > 300 || child.exitCode !== null) throw new Error('the API host did not start');
    await sleep(200);
  }
  let users = 0;
  return {
    url,
    pid: child.pid,
    async signUp() {
      const res = await fetch(`${url}/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.0.${++users}` },
        body: JSON.stringify({
          email: `bench-${Date.now()}-${users}@example.test`,
          password: 'bench password 1',
        }),
      });
      if (res.status !== 200) throw new Error(`signup: ${res.status} ${await res.text()}`);
      return (await res.json()).session.access_token;
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
