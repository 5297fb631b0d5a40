import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { platform } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { persistentSecret } from '../secrets';
import { binaries, checkReach, initdb, SUPERUSER, serverUser } from './postgres-cluster';
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

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/** A TCP port of 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
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
  const legacy = ['api-service', 'collab-service']
    .map((s) => join(root, s, 'pg'))
    .filter((d) => existsSync(join(d, 'PG_VERSION')));
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
async function stopLeftover(
  pgdata: string,
  log: (message: string) => void,
  timeoutMs: number,
): Promise<void> {
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
    throw new EmbeddedDatabaseError(
      `The PostgreSQL server left running in ${pgdata} (pid ${pid}) does not stop; stop it and start again.`,
    );
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
    checkReach(owner, bins.postgres, root, log);
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
      [
        '-D',
        s.pgdata,
        '-p',
        String(s.port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
      ],
      {
        ...s.owner,
        detached: true,
        stdio: ['ignore', logFd, logFd],
        env: { ...process.env, LC_MESSAGES: 'C' },
      },
    );
  } finally {
    closeSync(logFd);
  }
  child.unref();
  let exited = false;
  const exit = new Promise<void>((done) => {
    child.once('exit', () => {
      exited = true;
      done();
    });
  });
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
      throw new EmbeddedDatabaseError(
        `${s.pgdata} is in use by another PostgreSQL server; stop it or use another DATA_DIR.`,
      );
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
