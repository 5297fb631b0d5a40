import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@hwp/platform';
import { Client } from 'pg';
import {
  binaries,
  checkReach,
  initdb,
  SUPERUSER,
  serverUser,
} from '../../packages/platform/src/db/postgres-cluster';
import { embeddedDataDir } from '../process-kit';

/** How the server is stopped: the postmaster's signals (what `pg_ctl stop -m <mode>` sends). */
const SHUTDOWN_SIGNALS = { smart: 'SIGTERM', fast: 'SIGINT', immediate: 'SIGQUIT' } as const;
export type ShutdownMode = keyof typeof SHUTDOWN_SIGNALS;

export interface PrivatePostgres {
  readonly port: number;
  /** postgres:// URL of `database` on this server. */
  url(database: string): string;
  /** Stops the server with `mode` and resolves when the postmaster has exited. */
  stop(mode: ShutdownMode): Promise<void>;
  /** Starts it again on the same port and data folder; resolves once it answers queries. */
  start(): Promise<void>;
  /** Whether the postmaster runs. */
  readonly running: boolean;
  /** The last lines of the server log. */
  log(lines?: number): string;
  /** Stops the server (fast) and deletes its folder. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL server of the test's own (the embedded build's binaries, a fresh cluster in a temp
 * folder, a free loopback port), which the test may stop and start at will. Never the machine's
 * server on 5432: other test files use that one.
 */
export async function startPrivatePostgres(prefix = 'hwp-pg-'): Promise<PrivatePostgres> {
  const root = embeddedDataDir(prefix);
  const bins = binaries();
  const owner = serverUser(() => {});
  checkReach(owner, bins.postgres, root, () => {});
  const pgdata = join(root, 'data');
  const password = 'restart-test';
  initdb(bins.initdb, pgdata, password, owner);
  const logFile = join(root, 'postgres.log');
  const port = await freePort();
  const url = (database: string) =>
    `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  async function answers(): Promise<boolean> {
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
  }

  async function start(): Promise<void> {
    const fd = openSync(logFile, 'a');
    try {
      child = spawn(
        bins.postgres,
        [
          '-D',
          pgdata,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'unix_socket_directories=',
        ],
        { ...owner, detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, LC_MESSAGES: 'C' } },
      );
    } finally {
      closeSync(fd);
    }
    const proc = child;
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      if (await answers()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`private PostgreSQL did not start:\n${tail(12)}`);
  }

  function tail(lines = 20): string {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  async function stop(mode: ShutdownMode): Promise<void> {
    if (!isRunning()) return;
    child?.kill(SHUTDOWN_SIGNALS[mode]);
    await exited;
  }

  // If the test process ends without destroy(), the server must not outlive it.
  const onExit = () => {
    if (isRunning()) child?.kill('SIGQUIT');
  };
  process.once('exit', onExit);
  await start();
  return {
    port,
    url,
    stop,
    start,
    get running() {
      return isRunning();
    },
    log: tail,
    async destroy() {
      process.removeListener('exit', onExit);
      await stop('fast');
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A fresh temp folder (for BLOB_DIR and the like), removed by the caller. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
