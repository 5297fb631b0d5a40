import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FsBlobStore } from '@hwp/platform';
import {
  expectEventually,
  type FakeSmtp,
  parseMetrics,
  seriesValue,
  uniqueEmail,
} from '@hwp/platform/test-kit';
import WebSocket from 'ws';
import { supabaseClientFlow } from '#api-test/supabase-flow';
import { SseClient } from '#collab-test/sse-client';
import { confirmedUser } from '#test/confirmed-user';
import {
  type GatewayStack,
  jsonCall,
  rawGet,
  startGatewayStack,
  statusBeforeBody,
} from '#test/gateway-stack';
import type { Gateway } from '#test/nginx-gateway';
import type { TwoServices } from '#test/two-services';
import { embeddedDataDir, ROOT } from './process-kit';

/**
 * The compose gateway for real: Debian's nginx with infra/nginx/gateway.conf (upstreams pointed at
 * local ports) in front of two processes of each service on Postgres and RabbitMQ, as
 * `docker compose up --scale api-service=2 --scale collab-service=2` runs them. Clients talk to the
 * gateway only, except where a test names the replica it reaches.
 */
describe('the nginx gateway in front of both services', () => {
  const collabBlobKey = randomBytes(32).toString('hex');
  const blobDir = embeddedDataDir('hwp-gateway-blobs-');
  let stack: GatewayStack;
  let smtp: FakeSmtp;
  let services: TwoServices;
  let gateway: Gateway;
  let url: string;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    stack = await startGatewayStack({ blobDir, collabBlobKey });
    ({ smtp, services, gateway, url } = stack);
  }, 180_000);

  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  /** A confirmed user with a GoTrue session, through the gateway. */
  const signedUpUser = () => confirmedUser(url, smtp, 'gw');

  const collab = (token: string, method: string, path: string, body?: unknown, base = url) =>
    jsonCall(base, token, method, path, body);

  async function open(token: string, query: string, headers: Record<string, string> = {}, base = url) {
    const stream = await SseClient.open(base, `/v1/events?${query}`, token, headers);
    streams.push(stream);
    return stream;
  }

  it('answers its own health check', async () => {
    const res = await fetch(`${url}/gateway/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service: 'gateway' });
  });

  it('routes @supabase/supabase-js and auth-js, unchanged, to the API host', async () => {
    await supabaseClientFlow(url, (to) => smtp.nextMessage(to));
  });

  it('passes the request id through and mints one when the client sends none', async () => {
    const kept = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'gw-test-1' } });
    expect(kept.headers.get('x-request-id')).toBe('gw-test-1');
    const minted = await fetch(`${url}/v1/config`);
    expect(minted.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('streams server-sent events unbuffered and replays what a reconnecting client missed', async () => {
    const { token } = await signedUpUser();
    expect((await collab(token, 'POST', '/v1/users/init', {})).status).toBe(200);
    const workspace = `gw-${randomBytes(4).toString('hex')}`;
    expect((await collab(token, 'POST', '/v1/workspaces', { name: workspace })).status).toBe(201);

    const live = await open(token, `workspace=${workspace}`);
    expect(live.status).toBe(200);
    expect(live.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(live.headers['content-encoding']).toBeUndefined();
    // The event reaches the client while the response is still open: nothing sits in a buffer.
    const first = await collab(token, 'POST', '/v1/parts', {
      workspace,
      partNumber: 'GW-1',
      name: 'Bracket',
    });
    expect(first.status).toBe(201);
    const seen = await live.waitFor(
      (e) => e.type === 'part' && (e.data as { partNumber?: string }).partNumber === 'GW-1',
    );
    expect(live.ended).toBe(false);
    live.close();

    // Two changes while no stream is open; the reconnect with Last-Event-ID gets exactly those.
    for (const partNumber of ['GW-2', 'GW-3'])
      expect(
        (await collab(token, 'POST', '/v1/parts', { workspace, partNumber, name: 'Plate' })).status,
      ).toBe(201);
    const again = await open(token, `workspace=${workspace}`, { 'Last-Event-ID': String(seen.id) });
    await again.waitFor((e) => (e.data as { partNumber?: string }).partNumber === 'GW-3');
    expect(again.of('part').map((e) => (e.data as { partNumber?: string }).partNumber)).toEqual([
      'GW-2',
      'GW-3',
    ]);
  });

  it('upgrades /ws to a WebSocket of the API host, chat included', async () => {
    const { token } = await signedUpUser();
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, ['bearer', token]);
    const frames: { type: string; [key: string]: unknown }[] = [];
    socket.on('message', (data) => frames.push(JSON.parse(String(data))));
    await expectEventually(() => expect(frames.map((f) => f.type)).toContain('ready'));
    expect(socket.protocol).toBe('bearer');
    socket.send(JSON.stringify({ type: 'subscribe', channel: 'chat:gateway' }));
    await expectEventually(() => expect(frames.map((f) => f.type)).toContain('chat.history'));
    socket.send(JSON.stringify({ type: 'chat.send', room: 'gateway', text: 'through nginx' }));
    await expectEventually(() =>
      expect(frames.find((f) => f.type === 'chat.message')).toMatchObject({
        message: { text: 'through nginx' },
      }),
    );
    socket.close();
  });

  it('serves a byte range of a stored object through a pre-signed URL', async () => {
    const probe = await fetch(`${url}/v1/system/probes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${services.opsToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'ranged download' }),
    });
    expect(probe.status).toBe(202);
    const { storage } = (await probe.json()) as { storage: { key: string } };
    // The collaboration host's own key and public address: the URL it would hand to a client.
    const store = new FsBlobStore({
      root: join(blobDir, 'collab'),
      publicBaseUrl: `${url}/v1/blobs`,
      signingKey: collabBlobKey,
    });
    const signed = await store.presignGet(storage.key, { expiresIn: 60 });
    expect(signed.startsWith(`${url}/v1/blobs/`)).toBe(true);
    const whole = Buffer.from(await (await fetch(signed)).arrayBuffer());
    expect(whole.length).toBeGreaterThan(10);

    const ranged = await fetch(signed, { headers: { range: 'bytes=2-9' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 2-9/${whole.length}`);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(whole.subarray(2, 10));

    const beyond = await fetch(signed, { headers: { range: `bytes=${whole.length + 10}-` } });
    expect(beyond.status).toBe(416);
  });

  it('hands out pre-signed upload URLs naming the gateway, which store the object through it', async () => {
    const { token } = await signedUpUser();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const content = randomBytes(3000);
    const started = await fetch(`${url}/files/upload-url`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'through-the-gateway.bin', size: content.length }),
    });
    expect(started.status).toBe(201);
    const { upload_id, parts } = (await started.json()) as {
      upload_id: string;
      parts: { part_number: number; url: string }[];
    };
    expect(parts).toHaveLength(1);
    // The address the browser used, not a replica's own (the gateway routes /blobs/ to the API host).
    expect(parts[0].url.startsWith(`${url}/blobs/`)).toBe(true);
    const put = await fetch(parts[0].url, { method: 'PUT', body: content });
    expect(put.status).toBe(200);
    const etag = put.headers.get('etag');
    expect(etag).toBeTruthy();

    const completed = await fetch(`${url}/files/upload-complete`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ upload_id, parts: [{ part_number: 1, etag }] }),
    });
    expect(completed.status).toBe(201);
    const file = (await completed.json()) as { id: string; size: number; url: string };
    expect(file.size).toBe(content.length);
    const downloaded = await expectEventually(async () => {
      const res = await fetch(`${url}${file.url}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    });
    expect(downloaded).toEqual(content);
  });

  it('signs collaboration URLs with the gateway address, and serves them through it', async () => {
    const { token } = await signedUpUser();
    const init = await collab(token, 'POST', '/v1/users/init', {});
    expect(init.status).toBe(200);
    const username = (init.body.user as { username: string }).username;
    const workspace = `gw-${randomBytes(4).toString('hex')}`;
    expect((await collab(token, 'POST', '/v1/workspaces', { name: workspace })).status).toBe(201);
    const content = Buffer.from('signed through the gateway');
    const form = new FormData();
    form.append('file', new Blob([content], { type: 'text/plain' }), 'signed.txt');
    const uploaded = await fetch(`${url}/v1/upload?${new URLSearchParams({ workspace, username })}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);

    const path = `/v1/serve/${workspace}/${username}/signed.txt`;
    const signed = await collab(token, 'GET', `/signed-url?${new URLSearchParams({ path })}`);
    expect(signed.status).toBe(200);
    const link = signed.body.url as string;
    expect(link.startsWith(`${url}/v1/serve-signed/${workspace}/${username}/signed.txt?`)).toBe(true);
    // PUBLIC_COLLAB_URL, not the request's Host: a request naming another host gets the same base.
    const answer = await rawGet(`${url}/signed-url?${new URLSearchParams({ path })}`, {
      host: 'elsewhere.example',
      authorization: `Bearer ${token}`,
    });
    const elsewhere = (JSON.parse(answer) as { url: string }).url;
    expect(elsewhere.startsWith(`${url}/v1/serve-signed/`)).toBe(true);
    // Whichever replica answers, without credentials.
    for (let i = 0; i < 2; i++) {
      const served = await fetch(link);
      expect(served.status).toBe(200);
      expect(Buffer.from(await served.arrayBuffer())).toEqual(content);
    }
  });

  it('emails links naming the gateway, which land on SITE_URL signed in', async () => {
    const email = uniqueEmail('gw-link');
    const signup = await fetch(`${url}/auth/v1/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery' }),
    });
    expect(signup.status).toBe(200);
    const mail = await smtp.nextMessage(email);
    const link = /https?:\/\/[^\s"<>]+/.exec(mail.text)?.[0] as string;
    expect(link.startsWith(`${url}/auth/verify?`)).toBe(true);
    expect(new URL(link).searchParams.get('redirect_to')).toBe(url);
    const landed = await fetch(link, { redirect: 'manual' });
    expect(landed.status).toBe(303);
    expect(landed.headers.get('location')).toMatch(new RegExp(`^${url}/?#access_token=`));
  });

  it('refuses an upload above the gateway limit before it reaches a service', async () => {
    // Content-Length alone decides: nginx answers before reading (or forwarding) any of the body.
    const status = await statusBeforeBody(
      `${url}/v1/parts/import`,
      { 'content-type': 'text/csv', 'content-length': String(211 * 1024 * 1024) },
      'part_number,name\n',
    );
    expect(status).toBe(413);
  });
  it('balances requests over every replica of each service', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/v1/config`)).status).toBe(200);
    }
    const ports = (prefix: string) =>
      new Set(gateway.upstreams(prefix).map((addr) => Number(addr.split(':').pop())));
    await expectEventually(() => {
      expect(ports('/healthz')).toEqual(new Set(services.replicas.api.map((r) => r.port)));
      expect(ports('/v1/config')).toEqual(new Set(services.replicas.collab.map((r) => r.port)));
    });
  });

  it('delivers a part created through one replica to an SSE stream held by the other', async () => {
    const { token } = await signedUpUser();
    expect((await collab(token, 'POST', '/v1/users/init', {})).status).toBe(200);
    const workspace = `gw-${randomBytes(4).toString('hex')}`;
    expect((await collab(token, 'POST', '/v1/workspaces', { name: workspace })).status).toBe(201);
    const [first, second] = services.replicas.collab;

    const held = await open(token, `workspace=${workspace}`, {}, second.url);
    const viaGateway = await open(token, `workspace=${workspace}`);
    const created = await collab(
      token,
      'POST',
      '/v1/parts',
      { workspace, partNumber: 'GW-R1', name: 'Spacer' },
      first.url,
    );
    expect(created.status).toBe(201);
    for (const stream of [held, viaGateway])
      await stream.waitFor(
        (e) => e.type === 'part' && (e.data as { partNumber?: string }).partNumber === 'GW-R1',
      );
    // The replica holding the stream counts it in its metrics (scraped directly, as Prometheus does).
    const scraped = await fetch(`${second.url}/metrics`, {
      headers: { authorization: `Bearer ${services.opsToken}` },
    });
    expect(seriesValue(parseMetrics(await scraped.text()), 'hwp_sse_streams')).toBeGreaterThanOrEqual(1);
    // Operators scrape replicas directly; the gateway does not expose /metrics.
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
  });

  it('refuses a token on every replica of both services within 5 s of its logout', async () => {
    const { token } = await signedUpUser();
    expect((await collab(token, 'POST', '/v1/users/init', {})).status).toBe(200);
    const probes = [
      ...services.replicas.api.map((r) => `${r.url}/auth/v1/user`),
      ...services.replicas.collab.map((r) => `${r.url}/api/invitations`),
    ];
    const statuses = () =>
      Promise.all(
        probes.map(
          async (probe) => (await fetch(probe, { headers: { authorization: `Bearer ${token}` } })).status,
        ),
      );
    // Every replica has seen (and may have cached) the token as valid.
    expect(await statuses()).toEqual(probes.map(() => 200));

    const loggedOut = await fetch(`${url}/auth/v1/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(loggedOut.status).toBe(204);
    const started = Date.now();
    let last: number[] = [];
    while (Date.now() - started < 5_000) {
      last = await statuses();
      if (last.every((status) => status === 401)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(last).toEqual(probes.map(() => 401));
  });

  it('counts a rate limit once across replicas', async () => {
    const { token } = await signedUpUser();
    expect((await collab(token, 'POST', '/v1/users/init', {})).status).toBe(200);
    const workspace = `gw-${randomBytes(4).toString('hex')}`;
    expect((await collab(token, 'POST', '/v1/workspaces', { name: workspace })).status).toBe(201);
    // INVITATIONS_PER_MINUTE_PER_IP is 5: alternate replicas would allow 10 if each counted alone.
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const replica = services.replicas.collab[i % 2];
      const sent = await collab(
        token,
        'POST',
        '/api/invitations/send',
        { workspace, email: uniqueEmail('gw-invite') },
        replica.url,
      );
      statuses.push(sent.status);
    }
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
  });
  it('exposes every metric the Grafana dashboard of the observability profile charts', async () => {
    const exposed = new Set<string>();
    for (const replica of [services.replicas.api[0], services.replicas.collab[0]]) {
      const res = await fetch(`${replica.url}/metrics`, {
        headers: { authorization: `Bearer ${services.opsToken}` },
      });
      expect(res.status).toBe(200);
      for (const name of parseMetrics(await res.text()).keys()) exposed.add(name);
    }
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'infra/grafana/dashboards/hwp.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const charted = dashboard.panels.flatMap((panel) =>
      panel.targets.flatMap((target) => target.expr.match(/\bhwp_[a-z0-9_]+/g) ?? []),
    );
    expect(charted.length).toBeGreaterThan(10);
    const missing = charted
      .map((name) => name.replace(/_(bucket|count|sum)$/, ''))
      .filter((name) => !exposed.has(name));
    expect(missing).toEqual([]);
  });
});
