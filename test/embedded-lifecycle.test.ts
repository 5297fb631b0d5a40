import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  embeddedDataDir,
  freePort,
  SCRIPTS,
  type ServiceProcess,
  spawnService,
  waitForStatus,
} from './process-kit';

/** The pid in the cluster's postmaster.pid, or undefined when the server is not running. */
function serverPid(dataDir: string): number | undefined {
  const file = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

function running(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

/**
 * The embedded runner's lifecycle around its private PostgreSQL server: a killed runner leaves the
 * server behind and the next start takes it over; one runner per data folder; the files of the
 * earlier PGlite mode are named, not silently ignored.
 */
describe('embedded runner lifecycle', () => {
  const dirs: string[] = [];
  const procs: ServiceProcess[] = [];

  function dataDir(): string {
    const dir = embeddedDataDir('hwp-embedded-life-');
    dirs.push(dir);
    return dir;
  }

  async function runner(dir: string): Promise<{ proc: ServiceProcess; api: string; collab: string }> {
    const ports = { api: await freePort(), collab: await freePort() };
    const proc = spawnService(SCRIPTS.embedded, {
      API_PORT: String(ports.api),
      COLLAB_PORT: String(ports.collab),
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
    });
    procs.push(proc);
    return { proc, api: `http://127.0.0.1:${ports.api}`, collab: `http://127.0.0.1:${ports.collab}` };
  }

  async function started(dir: string) {
    const r = await runner(dir);
    await waitForStatus(`${r.api}/healthz`, 200, 60_000, r.proc);
    await waitForStatus(`${r.collab}/healthz`, 200, 60_000, r.proc);
    return r;
  }

  afterAll(async () => {
    for (const proc of procs) proc.kill('SIGKILL');
    for (const dir of dirs) {
      const pid = serverPid(dir);
      if (running(pid)) process.kill(pid as number, 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('comes up with its data after SIGKILL, refuses a second runner, and stops its server on SIGTERM', async () => {
    const dir = dataDir();
    const first = await started(dir);
    const sent = await fetch(`${first.api}/system/probes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'survives a SIGKILL' }),
    });
    expect(sent.status).toBe(202);
    const probe = (await sent.json()) as { id: string };

    first.proc.kill('SIGKILL');
    await first.proc.exited;
    const leftover = serverPid(dir);
    expect(running(leftover)).toBe(true); // what a killed runner leaves behind

    const second = await started(dir);
    expect(running(leftover)).toBe(false);
    const ready = await fetch(`${second.collab}/readyz`);
    expect(ready.status).toBe(200);
    const again = await fetch(`${second.api}/system/probes/${probe.id}`);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(expect.objectContaining({ id: probe.id, note: 'survives a SIGKILL' }));

    const intruder = await runner(dir);
    expect(await intruder.proc.exited).toBe(1);
    const lines = intruder.proc.output().trim().split('\n');
    expect(lines[0]).toMatch(/^embedded: .* is in use by another running instance \(pid \d+\)/);
    // The refusal touched nothing: the first runner still answers from the same server.
    expect((await fetch(`${second.api}/system/probes/${probe.id}`)).status).toBe(200);

    const pid = serverPid(dir);
    second.proc.kill('SIGTERM');
    expect(await second.proc.exited).toBe(0);
    expect(running(pid)).toBe(false);
    expect(existsSync(join(dir, 'runner.pid'))).toBe(false);
  }, 180_000);

  it('names the folders of the earlier PGlite mode in one line instead of starting empty beside them', async () => {
    const dir = dataDir();
    mkdirSync(join(dir, 'collab-service', 'pg'), { recursive: true });
    writeFileSync(join(dir, 'collab-service', 'pg', 'PG_VERSION'), '17\n');
    const r = await runner(dir);
    expect(await r.proc.exited).toBe(1);
    const output = r.proc.output().trim().split('\n');
    expect(output[0]).toMatch(
      /^embedded: .*earlier PGlite embedded mode .*collab-service\/pg.*move .* aside/,
    );
    expect(existsSync(join(dir, 'postgres'))).toBe(false);
  }, 60_000);
});
