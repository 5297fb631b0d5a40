import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectEventually } from '@hwp/platform/test-kit';
import { freePort, SCRIPTS, type ServiceProcess, spawnService, waitForStatus } from './process-kit';

/**
 * The quick-start runner with nothing configured: PGlite served over its socket, a local blob
 * folder and the in-process bus shared by both services in one process.
 */
describe('embedded default (one process, no external services)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hwp-embedded-'));
  let proc: ServiceProcess | undefined;
  let ports: { api: number; collab: number };

  async function start(): Promise<ServiceProcess> {
    const p = spawnService(SCRIPTS.embedded, {
      API_PORT: String(ports.api),
      COLLAB_PORT: String(ports.collab),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    });
    await waitForStatus(`http://127.0.0.1:${ports.api}/healthz`, 200, 90_000, p);
    await waitForStatus(`http://127.0.0.1:${ports.collab}/healthz`, 200, 90_000, p);
    return p;
  }

  async function stop(p: ServiceProcess): Promise<void> {
    p.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  }

  beforeAll(async () => {
    ports = { api: await freePort(), collab: await freePort() };
  });
  afterAll(async () => {
    proc?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts both hosts, carries events between them, and keeps data across a restart', async () => {
    proc = await start();
    expect(proc.output()).toContain(`http://localhost:${ports.api}`);
    const ready = await fetch(`http://127.0.0.1:${ports.collab}/readyz`);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', broker: 'ok', storage: 'ok' },
    });

    const sent = await fetch(`http://127.0.0.1:${ports.api}/system/probes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'before restart' }),
    });
    expect(sent.status).toBe(202);
    const probe = (await sent.json()) as { id: string };
    await expectEventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${ports.collab}/v1/system/probes/${probe.id}`);
        expect(res.status).toBe(200);
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );

    await stop(proc);
    proc = await start();

    const again = await fetch(`http://127.0.0.1:${ports.api}/system/probes/${probe.id}`);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(
      expect.objectContaining({ id: probe.id, note: 'before restart', direction: 'sent' }),
    );
    const received = await fetch(`http://127.0.0.1:${ports.collab}/v1/system/probes/${probe.id}`);
    expect(await received.json()).toEqual(expect.objectContaining({ id: probe.id, direction: 'received' }));
    await stop(proc);
    proc = undefined;
  }, 240_000);
});
