import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { type FakeSmtp, startFakeSmtp } from '@hwp/platform/test-kit';
import { freePort } from '../process-kit';
import { type Gateway, startGateway } from './nginx-gateway';
import { startTwoServices, type TwoServices } from './two-services';

/** The compose gateway in front of two replicas of each service, with the fake mailer they send through. */
export interface GatewayStack {
  /** The gateway's address: both hosts' public URL. */
  url: string;
  smtp: FakeSmtp;
  services: TwoServices;
  gateway: Gateway;
  stop(): Promise<void>;
}

/**
 * nginx with infra/nginx/gateway.conf in front of two processes of each service, as
 * `docker compose up --scale api-service=2 --scale collab-service=2` runs them: blobs under
 * `blobDir` (`api/`, `collab/`), the collaboration host signing its blob URLs with `collabBlobKey`.
 */
export async function startGatewayStack(options: {
  blobDir: string;
  collabBlobKey: string;
}): Promise<GatewayStack> {
  const smtp = await startFakeSmtp('mailer', 'gateway');
  const gatewayPort = await freePort();
  const url = `http://127.0.0.1:${gatewayPort}`;
  const services = await startTwoServices({
    name: 'gw',
    // As in docker-compose: one proxy hop, both hosts' public URLs the gateway's address.
    env: { TRUST_PROXY: '1', PUBLIC_API_URL: url, PUBLIC_COLLAB_URL: url, SITE_URL: url },
    apiEnv: { SMTP_URL: smtp.url, BLOB_DIR: join(options.blobDir, 'api') },
    collabEnv: { BLOB_DIR: join(options.blobDir, 'collab'), BLOB_SIGNING_KEY: options.collabBlobKey },
    replicas: 2,
  });
  const gateway = await startGateway({
    gateway: gatewayPort,
    api: services.replicas.api.map((r) => r.port),
    collab: services.replicas.collab.map((r) => r.port),
  });
  return {
    url,
    smtp,
    services,
    gateway,
    async stop() {
      await gateway.stop();
      await services.stop();
      await smtp.stop();
    },
  };
}

/** A JSON request with a bearer token to `base` (the gateway or one replica). */
export async function jsonCall(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** A GET through node:http, which (unlike fetch) sends any Host header it is given; the body as text. */
export function rawGet(url: string, headers: OutgoingHttpHeaders): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const req = httpRequest(url, { headers });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The status of a POST that announces its headers' Content-Length but sends only `start` of the
 * body: what the server answers before reading the rest.
 */
export function statusBeforeBody(url: string, headers: OutgoingHttpHeaders, start: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', reject);
    req.write(start);
  });
}
