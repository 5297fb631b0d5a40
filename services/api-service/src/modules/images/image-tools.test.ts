import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CustomStyle, ImageOperationResult } from '@hwp/contracts';
import { binary, listen } from '@hwp/platform/test-kit';
import sharp from 'sharp';
import WebSocket from 'ws';
import { as, signUp, type TestUser } from '#test/api-test-kit';
import { upload } from '#test/factories';
import { startFilesApi } from '#test/files-test-setup';

let stack: Awaited<ReturnType<typeof startFilesApi>>;
let apiServer: Awaited<ReturnType<typeof listen>>;
/** A remote image host on 127.0.0.2, allowed by IMAGE_FETCH_ALLOWED_CIDRS (as an operator's internal host). */
let remote: Server;
let remoteBase: string;
let hits: string[];

beforeAll(async () => {
  stack = await startFilesApi({ IMAGE_FETCH_ALLOWED_CIDRS: '127.0.0.2/32', IMAGE_FETCH_TIMEOUT_MS: '3000' });
  apiServer = await listen(stack.api.app);
  hits = [];
  const shot = await productShot();
  remote = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/shot.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(shot);
    if (req.url === '/to-private') return res.writeHead(302, { location: 'http://127.0.0.1:9/secret' }).end();
    if (req.url === '/huge') {
      // 500 MB announced; the host must stop reading long before.
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(500 * 1024 * 1024) });
      const chunk = Buffer.alloc(1024 * 1024);
      const pump = () => {
        while (res.write(chunk)) if (res.destroyed) return;
      };
      res.on('drain', pump);
      pump();
      return;
    }
    if (req.url === '/text') return res.writeHead(200, { 'content-type': 'text/plain' }).end('not an image');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => remote.listen(0, '127.0.0.2', resolve));
  remoteBase = `http://127.0.0.2:${(remote.address() as AddressInfo).port}`;
}, 90_000);
afterAll(async () => {
  remote?.closeAllConnections();
  await new Promise((resolve) => remote?.close(resolve));
  await apiServer?.close();
  await stack?.stop();
});

/** A product shot: a red box with a darker edge on a plain white background. */
function productShot(width = 200, height = 160): Promise<Buffer> {
  const box = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
       <rect width="100%" height="100%" fill="#ffffff"/>
       <rect x="50" y="40" width="100" height="80" fill="#c01818" stroke="#600000" stroke-width="4"/>
     </svg>`,
  );
  return sharp(box).png().toBuffer();
}

async function uploaded(user: TestUser, name: string, content: Buffer): Promise<string> {
  const file = await upload(as(stack.api.app, user), name, content);
  return file.url;
}

async function downloaded(user: TestUser, url: string): Promise<Buffer> {
  const res = await as(stack.api.app, user).get(url).buffer(true).parse(binary);
  expect(res.status).toBe(200);
  return res.body as Buffer;
}

/** Remove-background on a white `width` x `height` PNG holding `shapes` (SVG): the result's raw pixels. */
async function backgroundRemoved(width: number, height: number, shapes: string) {
  const user = await signUp(stack.api.app);
  const png = await sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
         <rect width="100%" height="100%" fill="#ffffff"/>${shapes}</svg>`,
    ),
  )
    .png()
    .toBuffer();
  const source = await uploaded(user, 'shapes.png', png);
  const res = await as(stack.api.app, user)
    .post('/imgtool-remove-background')
    .send({ reference_image: source });
  expect(res.body.status).toBe('COMPLETED');
  return sharp(await downloaded(user, res.body.generated_images[0]))
    .raw()
    .toBuffer({ resolveWithObject: true });
}

describe('image tools on the local engine', () => {
  test('remove-background: a PNG with alpha, transparent corners and an opaque subject, saved as a file', async () => {
    const user = await signUp(stack.api.app);
    const source = await uploaded(user, 'shot.png', await productShot());
    const res = await as(stack.api.app, user)
      .post('/imgtool-remove-background')
      .send({ reference_image: source, folder_path: '/renders' });
    expect(res.status).toBe(200);
    const op = res.body as ImageOperationResult;
    expect(op).toMatchObject({ status: 'COMPLETED', tool: 'remove-background', error_message: null });
    expect(op.generated_images).toHaveLength(1);
    const png = sharp(await downloaded(user, op.generated_images[0]));
    const meta = await png.metadata();
    expect(meta).toMatchObject({ format: 'png', width: 200, height: 160, hasAlpha: true });
    const { data, info } = await png.raw().toBuffer({ resolveWithObject: true });
    const alpha = (x: number, y: number) => data[(y * info.width + x) * info.channels + 3];
    for (const [x, y] of [
      [0, 0],
      [199, 0],
      [0, 159],
      [199, 159],
      [20, 80],
    ])
      expect(alpha(x, y)).toBe(0);
    expect(alpha(100, 80)).toBe(255);
    const listed = await as(stack.api.app, user).get('/files').query({ folder_path: '/renders' });
    expect(listed.body.items.map((f: { id: string }) => `/files/${f.id}/download`)).toEqual(
      op.generated_images,
    );
    // The stored operation answers the same.
    const again = await as(stack.api.app, user).get(`/image-operations/${op.id}`);
    expect(again.body).toEqual(op);
    const other = await signUp(stack.api.app);
    expect((await as(stack.api.app, other).get(`/image-operations/${op.id}`)).status).toBe(404);
  });

  test('remove-background: GrabCut clears a background-coloured hole the outline encloses', async () => {
    const { data, info } = await backgroundRemoved(
      200,
      200,
      '<circle cx="100" cy="100" r="70" fill="none" stroke="#1840a0" stroke-width="30"/>',
    );
    const alpha = (x: number, y: number) => data[(y * info.width + x) * info.channels + 3];
    expect(alpha(2, 2)).toBe(0); // outside
    expect(alpha(100, 100)).toBe(0); // the hole
    expect(alpha(100, 30)).toBe(255); // the ring
  });

  test('remove-background: a source larger than the mask keeps its size; the mask is scaled to it', async () => {
    const { data, info } = await backgroundRemoved(
      3000,
      2500,
      '<circle cx="1500" cy="1250" r="900" fill="#1840a0"/>',
    );
    expect([info.width, info.height, info.channels]).toEqual([3000, 2500, 4]);
    const pixel = (x: number, y: number) => [
      ...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4),
    ];
    expect(pixel(5, 5)[3]).toBe(0);
    expect(pixel(2990, 2490)[3]).toBe(0);
    expect(pixel(1500, 1250)).toEqual([0x18, 0x40, 0xa0, 255]);
  });

  test('vectorize: an SVG that parses, fewer colours for a logo prompt', async () => {
    const user = await signUp(stack.api.app);
    const source = await uploaded(user, 'logo.png', await productShot());
    const res = await as(stack.api.app, user)
      .post('/imgtool-vectorize')
      .send({ reference_image: source, prompt: 'flat logo' });
    expect(res.body).toMatchObject({ status: 'COMPLETED', tool: 'vectorize' });
    const svg = await downloaded(user, res.body.generated_images[0]);
    expect(svg.toString('utf8')).toMatch(/^<svg[^>]*viewBox="0 0 200 160"/);
    expect(svg.toString('utf8')).toContain('<path');
    const rendered = await sharp(svg).metadata();
    expect(rendered).toMatchObject({ format: 'svg', width: 200, height: 160 });
  });

  test('upscale: clarity and the local generative model to the exact size; a remote image_path is 400', async () => {
    const user = await signUp(stack.api.app);
    const source = await uploaded(user, 'small.png', await productShot(100, 60));
    const res = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: source, scale_factor: 3 });
    expect(res.body).toMatchObject({ status: 'COMPLETED', tool: 'upscale' });
    const meta = await sharp(await downloaded(user, res.body.generated_images[0])).metadata();
    expect([meta.width, meta.height]).toEqual([300, 180]);
    const twice = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: source.split('/')[2] });
    expect((await sharp(await downloaded(user, twice.body.generated_images[0])).metadata()).width).toBe(200);
    // generative without a provider: the local ESRGAN model, exact size, not the Lanczos result.
    const generative = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: source, mode: 'generative', scale_factor: 2 });
    expect(generative.body).toMatchObject({ status: 'COMPLETED', tool: 'upscale' });
    const model = await downloaded(user, generative.body.generated_images[0]);
    expect(await sharp(model).metadata()).toMatchObject({ width: 200, height: 120 });
    const lanczos = await downloaded(user, twice.body.generated_images[0]);
    expect(model.equals(lanczos)).toBe(false);
    // It is the same picture: scaled back down, it differs little from the source.
    const back = await sharp(model).resize(100, 60).removeAlpha().raw().toBuffer();
    const original = await sharp(await productShot(100, 60))
      .removeAlpha()
      .raw()
      .toBuffer();
    const meanDifference = back.reduce((sum, v, i) => sum + Math.abs(v - original[i]), 0) / back.length;
    expect(meanDifference).toBeLessThan(12);
    // No provider configured: the hosted routes say which variables to set; no image is made up.
    for (const [path, variable] of [
      ['/image-generation-providerA', 'IMAGE_PROVIDER_A_URL'],
      ['/image-generation-providerB', 'IMAGE_PROVIDER_B_URL'],
      ['/image-generation-product-photo', 'IMAGE_PROVIDER_A_URL'],
      ['/image-generation-product-mockups', 'IMAGE_PROVIDER_B_URL'],
    ]) {
      const answer = await as(stack.api.app, user).post(path).send({ prompt: 'a part' });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 503, code: 'unavailable' });
      expect(answer.body.detail).toContain(variable);
    }
    const bad = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: source, scale_factor: 5 });
    expect(bad.status).toBe(400);
    const remoteSource = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: `${remoteBase}/shot.png` });
    expect(remoteSource.status).toBe(400);
  });

  test('analysis: size, palette and exposure as text; from a remote URL of an allowed host', async () => {
    const user = await signUp(stack.api.app);
    const res = await as(stack.api.app, user)
      .post('/image-analysis')
      .send({ prompt: 'Is the product centred?', reference_image: `${remoteBase}/shot.png` });
    expect(res.body).toMatchObject({ status: 'COMPLETED', tool: 'analysis', generated_images: [] });
    expect(res.body.analysis).toContain('200 x 160 px, PNG');
    expect(res.body.analysis).toMatch(/#ffffff/);
    expect(res.body.analysis).toMatch(/Brightness \d+\/255/);
  });

  test('reference_image: loopback, metadata address, a redirect to a private address, 500 MB and non-images are 400', async () => {
    const user = await signUp(stack.api.app);
    const tool = (reference_image: string) =>
      as(stack.api.app, user).post('/imgtool-remove-background').send({ reference_image });
    for (const url of [
      `http://127.0.0.1:${new URL(apiServer.url).port}/healthz`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/x.png',
      'http://localhost/x.png',
      `${remoteBase}/to-private`,
      'ftp://example.com/x.png',
      'http://user:pw@127.0.0.2/x.png',
      `${remoteBase}/text`,
    ]) {
      const res = await tool(url);
      expect({ url, status: res.status, code: res.body.code }).toEqual({
        url,
        status: 400,
        code: 'validation_failed',
      });
    }
    const started = Date.now();
    const huge = await tool(`${remoteBase}/huge`);
    expect(huge.status).toBe(400);
    expect(huge.body.detail).toMatch(/larger than/);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The redirect was followed to its check, never to the private address.
    expect(hits).toContain('/to-private');
  });

  test('the 11th AI call in a window is 429; standard routes are unaffected', async () => {
    const user = await signUp(stack.api.app);
    const source = await uploaded(user, 'tiny.png', await productShot(40, 40));
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push(
        (await as(stack.api.app, user).post('/imgtool-upscale').send({ image_path: source, scale_factor: 1 }))
          .status,
      );
    }
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    expect((await as(stack.api.app, user).get('/files')).status).toBe(200);
    // The style reads are image-tool routes too; polling an operation is not.
    expect((await as(stack.api.app, user).get('/imgtool-list-styles')).status).toBe(429);
    expect(
      (await as(stack.api.app, user).get('/image-operations/01a21b00-0000-7000-8000-000000000000')).status,
    ).toBe(404);
  });

  test('custom styles: palette from reference images; list and get in the tenant only', async () => {
    const user = await signUp(stack.api.app);
    const a = await uploaded(user, 'ref-a.png', await productShot());
    const b = await uploaded(user, 'ref-b.png', await productShot(120, 120));
    const created = await as(stack.api.app, user)
      .post('/imgtool-create-style')
      .send({ name: 'Studio red', reference_images: [a, b] });
    expect(created.status).toBe(201);
    const style = created.body as CustomStyle;
    expect(style).toMatchObject({ name: 'Studio red', reference_images: [a, b], created_by: user.user.id });
    expect(style.palette[0]).toBe('#ffffff');
    expect(
      style.palette.some(
        (hex) => Number.parseInt(hex.slice(1, 3), 16) > 150 && Number.parseInt(hex.slice(3, 5), 16) < 60,
      ),
    ).toBe(true);
    expect(style.description).toContain('Palette');
    expect((await as(stack.api.app, user).get('/imgtool-list-styles')).body.items).toEqual([style]);
    expect((await as(stack.api.app, user).get(`/imgtool-get-style/${style.id}`)).body).toEqual(style);
    const other = await signUp(stack.api.app);
    expect((await as(stack.api.app, other).get(`/imgtool-get-style/${style.id}`)).status).toBe(404);
    expect((await as(stack.api.app, other).get('/imgtool-list-styles')).body.items).toEqual([]);
    // Another user's file is not a reference image of this user.
    const refused = await as(stack.api.app, other)
      .post('/imgtool-create-style')
      .send({ name: 'x', reference_images: [a] });
    expect(refused.status).toBe(404);
  });

  test('sources by the file record’s path (sections 2.4 and 2.6), in the caller’s tenant only', async () => {
    const user = await signUp(stack.api.app);
    const file = await upload(as(stack.api.app, user), 'shot.png', await productShot(100, 60), {
      folder_path: '/products/shoes',
    });
    expect(file.path).toBe('/products/shoes/shot.png');
    const upscaled = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: file.path, scale_factor: 2 });
    expect(upscaled.body).toMatchObject({ status: 'COMPLETED', tool: 'upscale' });
    const style = await as(stack.api.app, user)
      .post('/imgtool-create-style')
      .send({ name: 'By path', reference_images: [file.path] });
    expect(style.status).toBe(201);
    expect(style.body.reference_images).toEqual([file.path]);
    // Not a file there, or another tenant's path: 404; a path that names no file: 400.
    const missing = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: '/products/none.png' });
    expect(missing.status).toBe(404);
    const other = await signUp(stack.api.app);
    const theirs = await as(stack.api.app, other).post('/imgtool-upscale').send({ image_path: file.path });
    expect(theirs.status).toBe(404);
    const folderOnly = await as(stack.api.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: '/products/' });
    expect(folderOnly.status).toBe(400);
  });

  test('a WebSocket client gets its own operation’s completion, and another tenant’s client nothing', async () => {
    const user = await signUp(stack.api.app);
    const other = await signUp(stack.api.app);
    const frames: Record<string, { type: string; operation?: ImageOperationResult }[]> = {
      mine: [],
      theirs: [],
    };
    const open = (who: TestUser, key: string) =>
      new Promise<WebSocket>((resolve) => {
        const ws = new WebSocket(`${apiServer.url.replace(/^http/, 'ws')}/ws`, ['bearer', who.token]);
        ws.on('message', (data) => {
          const frame = JSON.parse(String(data));
          frames[key].push(frame);
          if (frame.type === 'ready')
            ws.send(JSON.stringify({ type: 'subscribe', channel: 'image-operations' }));
          if (frame.type === 'subscribed') resolve(ws);
        });
      });
    const [mine, theirs] = await Promise.all([open(user, 'mine'), open(other, 'theirs')]);
    const source = await uploaded(user, 'ws.png', await productShot(60, 60));
    const res = await as(stack.api.app, user).post('/imgtool-upscale').send({ image_path: source });
    const deadline = Date.now() + 10_000;
    while (!frames.mine.some((f) => f.operation?.status === 'COMPLETED') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const done = frames.mine.find((f) => f.operation?.status === 'COMPLETED');
    expect(done?.operation).toEqual(res.body);
    expect(frames.mine.some((f) => f.operation?.status === 'PROCESSING')).toBe(true);
    expect(frames.theirs.filter((f) => f.type === 'event')).toEqual([]);
    mine.close();
    theirs.close();
  });
});
