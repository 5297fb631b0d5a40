import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

/**
 * One local server speaking the image providers' wire dialects on a real socket, for the adapters'
 * tests: the OpenAI Images API (generations, edits; `b64_json` or `url`; `{error:{message,type,code}}`),
 * Stability REST v2 (multipart, JSON base64 answers, `content_moderation`, `CONTENT_FILTERED`),
 * Replicate predictions (create, poll `starting/processing/succeeded/failed`) and an
 * OpenAI-compatible chat completion with an `image_url` part. Behaviour is scripted by words in the
 * prompt: `busy` (429 with Retry-After once), `slow` (answers after 3 s), `reject`/`moderate`
 * (refusals), `filtered`, `url` (an image URL instead of base64); a prediction with scale 3 fails.
 */
export interface FakeImageProviders {
  url: string;
  key: string;
  /** Every request: path and, for JSON or multipart bodies, the fields. */
  requests: { path: string; fields: Record<string, unknown> }[];
  stop(): Promise<void>;
}

/** A deterministic 64x64 PNG whose colour comes from `seed`. */
export async function solidPng(seed: string, size = 64): Promise<Buffer> {
  const [r, g, b] = createHash('sha256').update(seed).digest();
  return sharp({ create: { width: size, height: size, channels: 3, background: { r, g, b } } })
    .png()
    .toBuffer();
}

async function body(
  req: IncomingMessage,
): Promise<{ raw: Buffer; fields: Record<string, unknown>; files: Record<string, Buffer> }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('application/json'))
    return { raw, fields: JSON.parse(raw.toString() || '{}'), files: {} };
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
    const fields: Record<string, unknown> = {};
    const files: Record<string, Buffer> = {};
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else files[name] = Buffer.from(await value.arrayBuffer());
    }
    return { raw, fields, files };
  }
  return { raw, fields: {}, files: {} };
}

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));

export async function startFakeImageProviders(): Promise<FakeImageProviders> {
  const key = `test-key-${randomUUID()}`;
  const requests: FakeImageProviders['requests'] = [];
  const busySeen = new Set<string>();
  const results = new Map<string, Buffer>();
  const predictions = new Map<string, { polls: number; image: Buffer; scale: number }>();
  let base = '';

  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path.startsWith('/results/')) {
        const bytes = results.get(path);
        if (!bytes) return res.writeHead(404).end();
        return res.writeHead(200, { 'content-type': 'image/png' }).end(bytes);
      }
      if (req.headers.authorization !== `Bearer ${key}`) {
        return json(res, 401, {
          error: {
            message: 'Incorrect API key provided',
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        });
      }
      const { fields, files } = await body(req);
      requests.push({ path, fields });
      const prompt = String(fields.prompt ?? '');
      if (/\bbusy\b/.test(prompt) && !busySeen.has(prompt)) {
        busySeen.add(prompt);
        return json(
          res,
          429,
          { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } },
          { 'retry-after': '1' },
        );
      }
      if (/\bslow\b/.test(prompt)) await new Promise((resolve) => setTimeout(resolve, 3000));
      if (res.destroyed) return;

      if (path === '/v1/images/generations' || path === '/v1/images/edits') {
        if (/\breject\b/.test(prompt)) {
          return json(res, 400, {
            error: {
              message: 'Your request was rejected as a result of our safety system.',
              type: 'image_generation_user_error',
              code: 'content_policy_violation',
            },
          });
        }
        const n = Number(fields.n ?? 1);
        const images = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            path.endsWith('edits') && files.image
              ? sharp(files.image).resize(64, 64).png().toBuffer()
              : solidPng(`${prompt}#${i}`),
          ),
        );
        const data = images.map((image, i) => {
          if (!/\burl\b/.test(prompt)) return { b64_json: image.toString('base64') };
          const at = `/results/${randomUUID()}-${i}.png`;
          results.set(at, image);
          return { url: `${base}${at}` };
        });
        return json(res, 200, { created: Math.floor(Date.now() / 1000), data });
      }

      if (path.startsWith('/v2beta/stable-image/generate/')) {
        if (req.headers.accept !== 'application/json')
          return json(res, 400, { name: 'bad_request', errors: ['accept must be application/json'] });
        if (/\bmoderate\b/.test(prompt)) {
          return json(res, 403, {
            id: randomUUID(),
            name: 'content_moderation',
            errors: ['Your request was flagged by our content moderation system.'],
          });
        }
        const image = files.image
          ? await sharp(files.image).resize(64, 64).png().toBuffer()
          : await solidPng(`${prompt}|${fields.negative_prompt ?? ''}`);
        return json(res, 200, {
          image: image.toString('base64'),
          finish_reason: /\bfiltered\b/.test(prompt) ? 'CONTENT_FILTERED' : 'SUCCESS',
          seed: 42,
        });
      }

      if (req.method === 'POST' && path === '/v1/predictions') {
        const input = fields.input as { image?: string; scale?: number };
        const image = Buffer.from(String(input?.image ?? '').replace(/^data:[^,]*,/, ''), 'base64');
        const id = randomUUID();
        predictions.set(id, { polls: 0, image, scale: Number(input?.scale ?? 2) });
        return json(res, 201, { id, status: 'starting', urls: { get: `${base}/v1/predictions/${id}` } });
      }
      if (req.method === 'GET' && path.startsWith('/v1/predictions/')) {
        const id = path.slice('/v1/predictions/'.length);
        const job = predictions.get(id);
        if (!job) return json(res, 404, { detail: 'Not found.' });
        job.polls++;
        if (job.polls < 3) return json(res, 200, { id, status: 'processing', output: null, error: null });
        if (job.scale === 3)
          return json(res, 200, { id, status: 'failed', output: null, error: 'CUDA out of memory' });
        const meta = await sharp(job.image).metadata();
        const at = `/results/${id}.png`;
        results.set(
          at,
          await sharp(job.image)
            .resize((meta.width ?? 1) * job.scale, (meta.height ?? 1) * job.scale)
            .png()
            .toBuffer(),
        );
        return json(res, 200, { id, status: 'succeeded', output: `${base}${at}`, error: null });
      }

      if (path === '/v1/chat/completions') {
        const content = (
          fields.messages as { content: { type: string; text?: string; image_url?: { url: string } }[] }[]
        )[0].content;
        const text = content.find((part) => part.type === 'text')?.text ?? '';
        const url = content.find((part) => part.type === 'image_url')?.image_url?.url ?? '';
        const meta = await sharp(Buffer.from(url.replace(/^data:[^,]*,/, ''), 'base64')).metadata();
        return json(res, 200, {
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: `Seen a ${meta.width}x${meta.height} image. Asked: ${text}`,
              },
            },
          ],
        });
      }
      json(res, 404, { error: { message: `no route ${path}`, type: 'invalid_request_error', code: null } });
    })().catch((error: unknown) => {
      if (!res.headersSent)
        json(res, 500, { error: { message: String(error), type: 'server_error', code: null } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    key,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
