import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@hwp/platform';

/** The EICAR test file, put together here so this source is not itself flagged. */
export const EICAR = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');

export function clamdBinary(): string | null {
  for (const candidate of ['/usr/sbin/clamd', '/usr/bin/clamd', '/usr/local/sbin/clamd'])
    if (existsSync(candidate)) return candidate;
  return null;
}

export interface RunningClamd {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Debian's clamd on a free loopback port, offline: its only signature database is built here with
 * `sigtool --md5` of the EICAR file (a `.hdb`), so no download is needed.
 */
export async function startClamd(samples: Record<string, Buffer> = {}): Promise<RunningClamd> {
  const binary = clamdBinary();
  if (!binary) throw new Error('clamd is not installed (apt-get install -y clamav-daemon)');
  const dir = mkdtempSync(join(tmpdir(), 'hwp-clamd-'));
  // Each sample's file name becomes its signature name.
  const lines: Buffer[] = [];
  for (const [name, content] of Object.entries({ 'Eicar-Test-Signature': Buffer.from(EICAR), ...samples })) {
    const sample = join(dir, name);
    writeFileSync(sample, content);
    lines.push(execFileSync('sigtool', ['--md5', sample], { cwd: dir }));
    rmSync(sample);
  }
  writeFileSync(join(dir, 'test.hdb'), Buffer.concat(lines));
  const port = await freePort();
  writeFileSync(
    join(dir, 'clamd.conf'),
    [
      `DatabaseDirectory ${dir}`,
      `TCPSocket ${port}`,
      'TCPAddr 127.0.0.1',
      'Foreground yes',
      `PidFile ${join(dir, 'clamd.pid')}`,
      `TemporaryDirectory ${dir}`,
      'StreamMaxLength 300M',
      '',
    ].join('\n'),
  );
  const child = spawn(binary, ['--config-file', join(dir, 'clamd.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`clamd did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    host: '127.0.0.1',
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
