import { rmSync } from 'node:fs';
import { binaryStlBox } from '@hwp/geometry/test-kit';
import { expectEventually, latestMessage } from '@hwp/platform/test-kit';
import WebSocket from 'ws';
import { supabaseClientFlow } from '#api-test/supabase-flow';
import {
  embeddedDataDir,
  freePort,
  SCRIPTS,
  type ServiceProcess,
  spawnService,
  waitForStatus,
} from './process-kit';

/**
 * The quick-start runner with nothing configured: a private PostgreSQL server in the data folder, a
 * local blob folder and the in-process bus shared by both services in one process.
 */
describe('embedded default (one process, no external services)', () => {
  const dataDir = embeddedDataDir('hwp-embedded-');
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
      checks: { database: 'ok', broker: 'ok', storage: 'ok', bus: 'ok' },
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

    // Accounts on the embedded server: signup, the confirmation code through the in-process notifier, sign-in.
    const api = `http://127.0.0.1:${ports.api}`;
    const json = { 'content-type': 'application/json' };
    const email = 'embedded@example.test';
    const signup = await fetch(`${api}/auth/signup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password: 'embedded password' }),
    });
    expect(signup.status).toBe(200);
    const code = await expectEventually(
      async () => {
        const res = await fetch(`${api}/dev/mailbox?to=${encodeURIComponent(email)}`);
        const body = (await res.json()) as { items: { text: string }[] };
        const match = /\b(\d{6})\b/.exec(body.items[0]?.text ?? '');
        if (!match) throw new Error('no code yet');
        return match[1];
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const verified = await fetch(`${api}/auth/verify`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ type: 'signup', email, token: code }),
    });
    expect(verified.status).toBe(200);
    const { session } = (await verified.json()) as { session: { access_token: string } };

    await stop(proc);
    proc = await start();

    // The signing key was generated once into the data folder: tokens survive the restart.
    const profile = await fetch(`${api}/profile`, {
      headers: { authorization: `Bearer ${session.access_token}` },
    });
    expect(profile.status).toBe(200);
    expect(await profile.json()).toEqual(expect.objectContaining({ email }));
    const login = await fetch(`${api}/auth/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password: 'embedded password' }),
    });
    expect(login.status).toBe(200);

    // The real Supabase clients on the embedded default, as on Postgres (the GoTrue surface).
    await supabaseClientFlow(api, (to, template) => latestMessage(api, to, template));

    // The collaboration host on the embedded server: a parts import and a trigram search.
    const collab = `http://127.0.0.1:${ports.collab}`;
    const auth = { authorization: `Bearer ${session.access_token}` };
    const init = await fetch(`${collab}/v1/users/init`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: '{}',
    });
    expect(init.status).toBe(200);
    const workspace = await fetch(`${collab}/v1/workspaces`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: JSON.stringify({ name: 'embedded-ws' }),
    });
    expect(workspace.status).toBe(201);
    const form = new FormData();
    form.set('workspace', 'embedded-ws');
    form.set(
      'file',
      new Blob(['pn,name,tags\nE-1,Hex bolt,a|b\nE-2,Flat washer,a\n'], { type: 'text/csv' }),
      'parts.csv',
    );
    const imported = await fetch(`${collab}/v1/parts/import`, { method: 'POST', headers: auth, body: form });
    expect(imported.status).toBe(200);
    expect(await imported.json()).toMatchObject({ rows: 2, created: 2, errorCount: 0 });
    const found = await fetch(`${collab}/v1/parts?workspace=embedded-ws&q=washer`, { headers: auth });
    expect(
      ((await found.json()) as { items: { partNumber: string }[] }).items.map((p) => p.partNumber),
    ).toEqual(['E-2']);

    // BOMs on the embedded server, eight at once: each tree holds its own lines and nobody else's.
    const post = (path: string, body: unknown) =>
      fetch(`${collab}${path}`, {
        method: 'POST',
        headers: { ...json, ...auth },
        body: JSON.stringify(body),
      });
    const listed = await fetch(`${collab}/v1/parts?workspace=embedded-ws`, { headers: auth });
    const byNumber = new Map(
      ((await listed.json()) as { items: { id: string; partNumber: string }[] }).items.map((p) => [
        p.partNumber,
        p.id,
      ]),
    );
    const trees = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const part = await post('/v1/parts', {
          workspace: 'embedded-ws',
          partNumber: `E-ASM-${i}`,
          name: `Assembly ${i}`,
        });
        expect(part.status).toBe(201);
        const assembly = (await part.json()) as { id: string };
        const bom = await post('/v1/boms', {
          workspace: 'embedded-ws',
          assemblyPartId: assembly.id,
          type: 'engineering',
          revision: 'A',
        });
        expect(bom.status).toBe(201);
        const { id } = (await bom.json()) as { id: string };
        const lines = await post(`/v1/boms/${id}/items?workspace=embedded-ws`, {
          items: [
            { childPartId: byNumber.get('E-1'), qty: i + 1 },
            { childPartId: byNumber.get('E-2'), qty: 2 * (i + 1), refdes: `W1-W${2 * (i + 1)}` },
          ],
        });
        expect(lines.status).toBe(200);
        const tree = await fetch(`${collab}/v1/boms/${id}?workspace=embedded-ws`, { headers: auth });
        return {
          i,
          id,
          body: (await tree.json()) as {
            assemblyPartNumber: string;
            tree: { partNumber: string; qty: number }[];
          },
        };
      }),
    );
    for (const { i, body } of trees) {
      expect(body.assemblyPartNumber).toBe(`E-ASM-${i}`);
      expect(body.tree.map((n) => [n.partNumber, n.qty])).toEqual([
        ['E-1', i + 1],
        ['E-2', 2 * (i + 1)],
      ]);
    }
    const exported = await fetch(`${collab}/v1/boms/${trees[3].id}/export.erp.csv?workspace=embedded-ws`, {
      headers: auth,
    });
    expect(exported.status).toBe(200);
    expect(await exported.text()).toContain('E-ASM-3,E-2');

    // Shared files on the embedded server: ten racing uploads on one etag, one winner, nine copies.
    const me = ((await init.json()) as { user: { username: string } }).user.username;
    const share = (body: string, fields: Record<string, string> = {}) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.set(k, v);
      form.set('file', new Blob([body]), 'shared.txt');
      return fetch(`${collab}/v1/upload?workspace=embedded-ws&username=${me}`, {
        method: 'POST',
        headers: auth,
        body: form,
      });
    };
    const seeded = await share('base');
    expect(seeded.status).toBe(201);
    const { etag } = (await seeded.json()) as { etag: string };
    const raced = await Promise.all(
      Array.from({ length: 10 }, (_, i) => share(`racer ${i}`, { baseVersion: etag })),
    );
    expect(raced.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const ranged = await fetch(`${collab}/v1/serve/embedded-ws/${me}/shared.txt`, {
      headers: { ...auth, range: 'bytes=0-5' },
    });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe('racer ');

    // Tasks and stats, and a model translated on the in-process bus into the local blob folder.
    const asJson = { ...auth, 'content-type': 'application/json' };
    const task = await fetch(`${collab}/v1/tasks`, {
      method: 'POST',
      headers: asJson,
      body: JSON.stringify({ path: `embedded-ws/${me}/shared.txt`, title: 'Check the racer' }),
    });
    expect(task.status).toBe(201);
    const stats = await fetch(`${collab}/v1/workspace/stats?workspace=embedded-ws`, { headers: auth });
    expect(((await stats.json()) as { tasks: { open: number; total: number } }).tasks).toMatchObject({
      open: 1,
      total: 1,
    });
    const model = new FormData();
    model.set('file', new Blob([binaryStlBox(10, 20, 30)]), 'cube.stl');
    const modelUpload = await fetch(`${collab}/v1/upload?workspace=embedded-ws&username=${me}`, {
      method: 'POST',
      headers: auth,
      body: model,
    });
    expect(modelUpload.status).toBe(201);
    const queued = await fetch(`${collab}/api/viewer/translate-file`, {
      method: 'POST',
      headers: asJson,
      body: JSON.stringify({ workspace: 'embedded-ws', filename: `${me}/cube.stl` }),
    });
    expect(queued.status).toBe(202);
    const translated = await expectEventually(
      async () => {
        const res = await fetch(
          `${collab}/api/viewer/models/lookup?workspace=embedded-ws&filename=${encodeURIComponent(`${me}/cube.stl`)}`,
          { headers: auth },
        );
        const body = (await res.json()) as { status: string; url: string | null; triangles: number | null };
        expect(body.status).toBe('success');
        return body;
      },
      { timeoutMs: 30_000 },
    );
    expect(translated.triangles).toBe(12);
    const glb = await fetch(translated.url as string);
    expect(glb.status).toBe(200);
    expect(
      Buffer.from(await glb.arrayBuffer())
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('glTF');

    // Files on the embedded default: uploads to the local blob folder, processing on the in-process bus.
    const uploadOne = async (name: string, content: Buffer) => {
      const body = new FormData();
      body.set('file', new Blob([content]), name);
      const res = await fetch(`${api}/files/upload`, { method: 'POST', headers: auth, body });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: string; url: string; thumbnail_url: string };
    };
    // The WebSocket on the embedded default: processing events and a chat room over the in-process bus.
    const socket = new WebSocket(`${api.replace(/^http/, 'ws')}/ws`, ['bearer', session.access_token]);
    const frames: { type: string; [key: string]: unknown }[] = [];
    socket.on('message', (data) => frames.push(JSON.parse(String(data))));
    await expectEventually(() => expect(frames.map((f) => f.type)).toContain('ready'));
    socket.send(JSON.stringify({ type: 'subscribe', channel: 'files' }));
    socket.send(JSON.stringify({ type: 'subscribe', channel: 'chat:embedded' }));
    await expectEventually(() => expect(frames.filter((f) => f.type === 'chat.history')).toHaveLength(1));
    socket.send(
      JSON.stringify({ type: 'chat.send', room: 'embedded', text: 'hello from the embedded host' }),
    );
    await expectEventually(() =>
      expect(frames.find((f) => f.type === 'chat.message')).toMatchObject({
        message: { room: 'embedded', text: 'hello from the embedded host' },
      }),
    );
    const stl = await uploadOne('bracket.stl', binaryStlBox(10, 20, 30));
    const done = await expectEventually(
      async () => {
        const res = await fetch(`${api}/files/${stl.id}`, { headers: auth });
        const record = (await res.json()) as { processing_status: string; metadata: { dimensions: unknown } };
        expect(record.processing_status).toBe('ready');
        return record;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(done.metadata.dimensions).toEqual({ width: 10, height: 20, depth: 30, units: null });
    expect((await fetch(`${api}${stl.thumbnail_url}`, { headers: auth })).status).toBe(200);
    await expectEventually(() =>
      expect(frames.find((f) => f.type === 'event')).toMatchObject({
        channel: 'files',
        event: 'file.processed.v1',
        data: { fileId: stl.id, status: 'ready' },
      }),
    );
    // An image tool on the embedded default: the local engine, the result saved as a file, its
    // completion on the socket.
    socket.send(JSON.stringify({ type: 'subscribe', channel: 'image-operations' }));
    await expectEventually(() =>
      expect(frames.filter((f) => f.type === 'subscribed' && f.channel === 'image-operations')).toHaveLength(
        1,
      ),
    );
    // The thumbnail processing made is a PNG to work on (its size is in the IHDR chunk).
    const thumbnail = Buffer.from(
      await (await fetch(`${api}${stl.thumbnail_url}`, { headers: auth })).arrayBuffer(),
    );
    const sizeOf = (image: Buffer) => [image.readUInt32BE(16), image.readUInt32BE(20)];
    const png = await uploadOne('thumbnail.png', thumbnail);
    const upscaled = await fetch(`${api}/imgtool-upscale`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ image_path: png.url, scale_factor: 2 }),
    });
    const operation = (await upscaled.json()) as { status: string; generated_images: string[] };
    expect(operation.status).toBe('COMPLETED');
    const result = await fetch(`${api}${operation.generated_images[0]}`, { headers: auth });
    const [width, height] = sizeOf(thumbnail);
    expect(sizeOf(Buffer.from(await result.arrayBuffer()))).toEqual([width * 2, height * 2]);
    await expectEventually(() =>
      expect(
        frames.find(
          (f) =>
            f.channel === 'image-operations' &&
            (f.operation as { status: string } | undefined)?.status === 'COMPLETED',
        ),
      ).toBeDefined(),
    );
    socket.close();
    // Concurrent uploads and ranged downloads: each client gets its own bytes back.
    const contents = Array.from({ length: 8 }, (_, i) => Buffer.alloc(50_000 + i * 1000, i + 1));
    const uploaded = await Promise.all(contents.map((c, i) => uploadOne(`part-${i}.bin`, c)));
    await Promise.all(
      uploaded.map(async (file, i) => {
        const res = await fetch(`${api}${file.url}`, { headers: { ...auth, range: 'bytes=100-199' } });
        expect(res.status).toBe(206);
        expect(Buffer.from(await res.arrayBuffer())).toEqual(contents[i].subarray(100, 200));
      }),
    );

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
