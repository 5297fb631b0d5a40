import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..');
export const SCRIPTS = {
  api: join(ROOT, 'services/api-service/dist/main.js'),
  collab: join(ROOT, 'services/collab-service/dist/main.js'),
  embedded: join(ROOT, 'services/embedded/dist/main.js'),
};

/**
 * A fresh DATA_DIR for the embedded runner. mkdtemp makes it private (700); as root the embedded
 * PostgreSQL server runs as the system user `postgres`, which must be able to enter it.
 */
export function embeddedDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

export { freePort } from '@hwp/platform';

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * Runs a built service entry point (or, with `args`, any program: `script` is then the binary) as its
 * own process with exactly `env` (plus PATH).
 */
export function spawnService(script: string, env: Record<string, string>, args?: string[]): ServiceProcess {
  const child = spawn(args ? script : process.execPath, args ?? [script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return {
    child,
    output: () => output,
    exited,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** Polls `url` until it answers `status` or the time is up (then throws with the process output). */
export async function waitForStatus(
  url: string,
  status: number,
  timeoutMs: number,
  proc?: ServiceProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (proc && proc.child.exitCode !== null) break;
    try {
      const res = await fetch(url);
      if (res.status === status) return;
      last = `${res.status} ${await res.text()}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer ${status} (last: ${last})\n${proc?.output() ?? ''}`);
}
