import type { ImageOperationResult } from '@hwp/contracts';
import { binary, expectEventually, s3Env } from '@hwp/platform/test-kit';
import sharp from 'sharp';
import { type ApiTestService, as, signUp, startApi, type TestUser } from '#test/api-test-kit';
import { upload } from '#test/factories';
import { type FakeImageProviders, startFakeImageProviders } from '#test/fake-image-providers';
import { startFilesApi } from '#test/files-test-setup';

let fake: FakeImageProviders;
let stack: Awaited<ReturnType<typeof startFilesApi>>;

function providerEnv(f: FakeImageProviders): Record<string, string> {
  return {
    IMAGE_PROVIDER_A_URL: f.url,
    IMAGE_PROVIDER_A_KEY: f.key,
    IMAGE_PROVIDER_B_URL: f.url,
    IMAGE_PROVIDER_B_KEY: f.key,
    IMAGE_PREDICTIONS_URL: f.url,
    IMAGE_PREDICTIONS_KEY: f.key,
    IMAGE_PREDICTIONS_MODEL: 'upscaler-version-1',
    IMAGE_VISION_URL: f.url,
    IMAGE_VISION_KEY: f.key,
    IMAGE_PROVIDER_TIMEOUT_MS: '1000',
    IMAGE_PREDICTION_POLL_MS: '100',
    RATE_LIMIT_AI_PER_WINDOW: '1000',
  };
}

beforeAll(async () => {
  fake = await startFakeImageProviders();
  stack = await startFilesApi(providerEnv(fake));
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

async function fileBytes(app: ApiTestService['app'], user: TestUser, url: string): Promise<Buffer> {
  const res = await as(app, user).get(url).buffer(true).parse(binary);
  expect(res.status).toBe(200);
  return res.body as Buffer;
}

const red = () =>
  sharp({ create: { width: 80, height: 50, channels: 3, background: { r: 200, g: 20, b: 20 } } })
    .png()
    .toBuffer();

describe('hosted providers behind one port (against a local fake of their dialects)', () => {
  test('provider A: n images as files; a URL answer; 429 then success; a safety refusal and a timeout end as ERROR', async () => {
    const user = await signUp(stack.api.app);
    const api = as(stack.api.app, user);
    const two = await api
      .post('/image-generation-providerA')
      .send({ prompt: 'a bracket', nbr_images: 2, folder_path: '/gen' });
    expect(two.body).toMatchObject({ status: 'COMPLETED', tool: 'generation-a', error_message: null });
    expect(two.body.generated_images).toHaveLength(2);
    const first = await sharp(await fileBytes(stack.api.app, user, two.body.generated_images[0])).metadata();
    expect(first).toMatchObject({ format: 'png', width: 64, height: 64 });
    expect(fake.requests.find((r) => r.fields.prompt === 'a bracket')?.fields).toMatchObject({
      n: 2,
      model: 'gpt-image-1',
    });

    const byUrl = await api.post('/image-generation-providerA').send({ prompt: 'a url answer' });
    expect(byUrl.body.status).toBe('COMPLETED');
    expect((await fileBytes(stack.api.app, user, byUrl.body.generated_images[0])).length).toBeGreaterThan(0);

    const busy = await api.post('/image-generation-providerA').send({ prompt: 'busy gasket' });
    expect(busy.body.status).toBe('COMPLETED');
    expect(fake.requests.filter((r) => r.fields.prompt === 'busy gasket')).toHaveLength(2);

    const refused = await api.post('/image-generation-providerA').send({ prompt: 'reject this' });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ status: 'ERROR', generated_images: [] });
    expect(refused.body.error_message).toMatch(/safety system/);

    const slow = await api.post('/image-generation-providerA').send({ prompt: 'slow one' });
    expect(slow.body).toMatchObject({ status: 'ERROR' });
    expect(slow.body.error_message).toMatch(/did not answer within 1000 ms/);
    const stored = await api.get(`/image-operations/${slow.body.id}`);
    expect(stored.body).toEqual(slow.body);
  }, 30_000);

  test('provider B: negative prompt sent as multipart; moderation and CONTENT_FILTERED end as ERROR', async () => {
    const user = await signUp(stack.api.app);
    const api = as(stack.api.app, user);
    const ok = await api
      .post('/image-generation-providerB')
      .send({ prompt: 'an enclosure', negative_prompt: 'text', nbr_images: 2 });
    expect(ok.body).toMatchObject({ status: 'COMPLETED', tool: 'generation-b' });
    expect(ok.body.generated_images).toHaveLength(2);
    const sent = fake.requests.filter((r) => r.fields.prompt === 'an enclosure');
    expect(sent).toHaveLength(2);
    expect(sent[0].fields).toMatchObject({ negative_prompt: 'text', output_format: 'png' });

    const moderated = await api.post('/image-generation-providerB').send({ prompt: 'moderate me' });
    expect(moderated.body.status).toBe('ERROR');
    expect(moderated.body.error_message).toMatch(/refused the request as unsafe content/);
    const filtered = await api.post('/image-generation-providerB').send({ prompt: 'filtered result' });
    expect(filtered.body.status).toBe('ERROR');
    expect(filtered.body.error_message).toMatch(/CONTENT_FILTERED/);
  });

  test('product photo edits the reference image; mockups take a style’s words and reference', async () => {
    const user = await signUp(stack.api.app);
    const api = as(stack.api.app, user);
    const source = (await upload(api, 'red.png', await red())).url;
    const photo = await api
      .post('/image-generation-product-photo')
      .send({ prompt: 'studio light', reference_image: source });
    expect(photo.body.status).toBe('COMPLETED');
    const edited = await sharp(await fileBytes(stack.api.app, user, photo.body.generated_images[0])).stats();
    expect(edited.dominant).toMatchObject({ r: expect.any(Number) });
    expect(edited.channels[0].mean).toBeGreaterThan(150);
    expect(fake.requests.at(-1)?.path).toBe('/v1/images/edits');

    const style = await api
      .post('/imgtool-create-style')
      .send({ name: 'Red line', reference_images: [source], description: 'bold red' });
    const mockup = await api
      .post('/image-generation-product-mockups')
      .send({ prompt: 'on a desk', style_id: style.body.id });
    expect(mockup.body.status).toBe('COMPLETED');
    const asked = fake.requests.at(-1);
    expect(asked?.path).toBe('/v2beta/stable-image/generate/core');
    expect(String(asked?.fields.prompt)).toContain('in the style "Red line": bold red');
    expect(asked?.fields.strength).toBe('0.6');
    const unknownStyle = await api
      .post('/image-generation-product-mockups')
      .send({ prompt: 'x', style_id: '01a21b00-0000-7000-8000-000000000000' });
    expect(unknownStyle.status).toBe(404);
  });

  test('generative upscale: PROCESSING, then COMPLETED after polls; a failed prediction ends as ERROR', async () => {
    const user = await signUp(stack.api.app);
    const api = as(stack.api.app, user);
    const source = (await upload(api, 'up.png', await red())).url;
    const started = await api
      .post('/imgtool-upscale')
      .send({ image_path: source, mode: 'generative', scale_factor: 2 });
    expect(started.body).toMatchObject({ status: 'PROCESSING', generated_images: [], completed_at: null });
    const done = await expectEventually(async () => {
      const res = await api.get(`/image-operations/${started.body.id}`);
      expect(res.body.status).toBe('COMPLETED');
      return res.body as ImageOperationResult;
    });
    const meta = await sharp(await fileBytes(stack.api.app, user, done.generated_images[0])).metadata();
    expect([meta.width, meta.height]).toEqual([160, 100]);

    const failing = await api
      .post('/imgtool-upscale')
      .send({ image_path: source, mode: 'generative', scale_factor: 3 });
    const failed = await expectEventually(async () => {
      const res = await api.get(`/image-operations/${failing.body.id}`);
      expect(res.body.status).toBe('ERROR');
      return res.body as ImageOperationResult;
    });
    expect(failed.error_message).toMatch(/failed: CUDA out of memory/);
  });

  test('a prediction running when its process stops is finished by the next one', async () => {
    const config = stack.api.deps.config;
    const shared = {
      ...s3Env(stack.s3),
      ...providerEnv(fake),
      DATABASE_URL: config.DATABASE_URL as string,
      AMQP_NAMESPACE: config.AMQP_NAMESPACE as string,
      DATA_DIR: config.DATA_DIR,
    };
    // This process would poll only after a minute: it stops first.
    const first = await startApi({ ...shared, IMAGE_PREDICTION_POLL_MS: '60000' });
    const user = await signUp(first.app);
    const source = (await upload(as(first.app, user), 'resume.png', await red())).url;
    const started = await as(first.app, user)
      .post('/imgtool-upscale')
      .send({ image_path: source, mode: 'generative' });
    expect(started.body.status).toBe('PROCESSING');
    await first.deps.lifecycle.shutdown();
    // Two processes start and both resume the job: its end is recorded once.
    const [next, other] = await Promise.all([startApi(shared), startApi(shared)]);
    try {
      const done = await expectEventually(async () => {
        const res = await as(next.app, user).get(`/image-operations/${started.body.id}`);
        expect(res.body.status).toBe('COMPLETED');
        return res.body as ImageOperationResult;
      });
      expect(done.generated_images).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const files = await as(next.app, user).get('/files').query({ folder_path: '/generated' });
      expect(
        files.body.items.filter((f: { name: string }) => f.name.includes(started.body.id.slice(-8))),
      ).toHaveLength(1);
    } finally {
      await next.deps.lifecycle.shutdown();
      await other.deps.lifecycle.shutdown();
    }
  });

  test('analysis goes to the configured vision model', async () => {
    const user = await signUp(stack.api.app);
    const api = as(stack.api.app, user);
    const source = (await upload(api, 'look.png', await red())).url;
    const res = await api
      .post('/image-analysis')
      .send({ prompt: 'What colour is it?', reference_image: source });
    expect(res.body).toMatchObject({
      status: 'COMPLETED',
      analysis: 'Seen a 80x50 image. Asked: What colour is it?',
    });
  });
});
