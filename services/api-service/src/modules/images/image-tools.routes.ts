import {
  CreateStyleRequest,
  CustomStyle,
  CustomStyleList,
  ErrorBodyDto,
  GenerationRequest,
  ImageAnalysisRequest,
  ImageOperationResult,
  NegativeGenerationRequest,
  ProductImageRequest,
  RemoveBackgroundRequest,
  UpscaleRequest,
  VectorizeRequest,
} from '@hwp/contracts';
import { type ApiRouter, ValidationError } from '@hwp/platform';
import type { RequestHandler } from 'express';
import sharp from 'sharp';
import { type TenantRouteSpec, tenantRoute } from '../tenancy/tenant-route';
import type { CustomStylesService } from './custom-styles.service';
import type { ImageSources } from './image-sources';
import type { ImageToolsService, ProviderJob } from './image-tools.service';
import {
  analyzeImage,
  removeBackground,
  upscaleClarity,
  upscaleGenerative,
  vectorizeImage,
} from './local-engine';
import { Predictions } from './providers/adapters';
import { type ImageProviders, unavailable } from './providers/registry';

/** Largest source of the local generative model (pixels): 1024 x 1024 takes it about a minute on two cores. */
const MAX_LOCAL_GENERATIVE_PIXELS = 1024 * 1024;

/** Largest upscaled image (pixels). */
const MAX_UPSCALED_PIXELS = 100_000_000;

const TAGS = ['image tools'];
const badSource = {
  description: 'The source is not a readable image, or a refused URL',
  schema: ErrorBodyDto,
};
const result = {
  description: 'The operation as it ended: COMPLETED, or ERROR with error_message',
  schema: ImageOperationResult,
};

export interface ImageRouteDeps {
  tools: ImageToolsService;
  sources: ImageSources;
  styles: CustomStylesService;
  providers: ImageProviders;
  /** authenticate, the AI rate limit (10 a minute per user), tenant resolution. */
  aiRoute: RequestHandler[];
  /** authenticate, the standard limit, tenant resolution. */
  signedIn: RequestHandler[];
}

const A_VARIABLES = ['IMAGE_PROVIDER_A_URL', 'IMAGE_PROVIDER_A_KEY'];
const B_VARIABLES = ['IMAGE_PROVIDER_B_URL', 'IMAGE_PROVIDER_B_KEY'];
const PREDICTION_VARIABLES = ['IMAGE_PREDICTIONS_URL', 'IMAGE_PREDICTIONS_KEY', 'IMAGE_PREDICTIONS_MODEL'];
const noProvider = { description: 'The provider of this route is not configured', schema: ErrorBodyDto };

/** The generative upscale as a prediction: started with the image, polled until it has an output. */
export function upscaleJob(predictions: Predictions, image: Buffer | undefined, scale: number): ProviderJob {
  return {
    start: async () => {
      if (!image) throw new Error('the source image is gone');
      return predictions.create(Predictions.upscaleInput(image, scale));
    },
    poll: async (job) => {
      const state = await predictions.get(job);
      if (state.status === 'succeeded') {
        if (state.output.length === 0) return { done: true, error: 'the provider answered no output' };
        const images = await Promise.all(
          state.output.map(async (url) => ({
            bytes: await predictions.download(url),
            extension: 'png' as const,
          })),
        );
        return { done: true, output: { images } };
      }
      if (state.status === 'failed' || state.status === 'canceled')
        return {
          done: true,
          error: `the provider's job ${state.status}${state.error ? `: ${state.error}` : ''}`,
        };
      return { done: false };
    },
  };
}

export function mountImageRoutes(
  api: ApiRouter,
  { tools, sources, styles, providers, aiRoute, signedIn }: ImageRouteDeps,
): void {
  const route = <Body>(spec: Omit<TenantRouteSpec<Body>, 'tags'>, before = aiRoute) =>
    tenantRoute<Body>(api, before, { ...spec, tags: TAGS });

  /** A generation route: the prompt (with a style's words), images from `make`, saved as PNGs. */
  const generation = <Body extends GenerationRequest & { reference_image?: string }>(
    spec: { path: string; summary: string; description: string; body: new () => Body },
    tool: 'generation-a' | 'generation-b' | 'product-photo' | 'product-mockups',
    missing: () => string[] | null,
    make: (body: Body, prompt: string, reference: Buffer | undefined) => Promise<Buffer[]>,
  ) =>
    route<Body>({
      method: 'post',
      path: spec.path,
      summary: spec.summary,
      description: spec.description,
      body: spec.body,
      responses: { 200: result, 400: badSource, 503: noProvider },
      handler: async ({ body, user, tenant }) => {
        const variables = missing();
        if (variables) throw unavailable(spec.path, variables);
        const userId = user.id;
        let prompt = body.prompt;
        let reference = body.reference_image
          ? await sources.source(tenant, userId, body.reference_image, 'reference_image')
          : undefined;
        if (body.style_id) {
          const style = await styles.style(tenant, userId, body.style_id);
          prompt = `${prompt}, ${style.suffix}`;
          if (tool === 'product-photo' || tool === 'product-mockups') reference ??= style.reference;
        }
        return tools.run(tenant, userId, tool, { ...(body as object) }, body.folder_path, async () => {
          const images = await make(body, prompt, reference);
          return { images: images.map((bytes) => ({ bytes, extension: 'png' as const })) };
        });
      },
    });

  generation(
    {
      path: '/image-generation-providerA',
      summary: 'Generate images with provider A (OpenAI Images API dialect)',
      description:
        '`nbr_images` 1-4 (default 1), saved as PNG files under `folder_path` (default `/generated`).',
      body: GenerationRequest,
    },
    'generation-a',
    () => (providers.a ? null : A_VARIABLES),
    (body, prompt) =>
      (providers.a as NonNullable<ImageProviders['a']>).generate(prompt, body.nbr_images ?? 1),
  );
  generation(
    {
      path: '/image-generation-providerB',
      summary: 'Generate images with provider B (Stability REST v2 dialect)',
      description: 'With `negative_prompt`; moderation refusals end the operation as ERROR with the reason.',
      body: NegativeGenerationRequest,
    },
    'generation-b',
    () => (providers.b ? null : B_VARIABLES),
    (body, prompt) =>
      (providers.b as NonNullable<ImageProviders['b']>).generate(
        prompt,
        body.negative_prompt,
        body.nbr_images ?? 1,
      ),
  );
  generation(
    {
      path: '/image-generation-product-photo',
      summary: 'Product photos (provider A): from a prompt, or editing `reference_image`',
      description:
        'With `reference_image` (or a style with reference images) the image is edited (image to image).',
      body: ProductImageRequest,
    },
    'product-photo',
    () => (providers.a ? null : A_VARIABLES),
    (body, prompt, reference) => {
      const a = providers.a as NonNullable<ImageProviders['a']>;
      const text = body.negative_prompt ? `${prompt}. Avoid: ${body.negative_prompt}` : prompt;
      return reference
        ? a.edit(text, reference, body.nbr_images ?? 1)
        : a.generate(text, body.nbr_images ?? 1);
    },
  );
  generation(
    {
      path: '/image-generation-product-mockups',
      summary: 'Product mockups (provider B): from a prompt, or image to image from `reference_image`',
      description: 'The same result shape as product photos (DECISIONS.md section 3).',
      body: ProductImageRequest,
    },
    'product-mockups',
    () => (providers.b ? null : B_VARIABLES),
    (body, prompt, reference) =>
      (providers.b as NonNullable<ImageProviders['b']>).generate(
        prompt,
        body.negative_prompt,
        body.nbr_images ?? 1,
        reference,
      ),
  );

  route<ImageAnalysisRequest>({
    method: 'post',
    path: '/image-analysis',
    summary: 'Analyse an image',
    description:
      'The local engine reads the pixels: size, format, transparency, palette, brightness, exposure, contrast and ' +
      'sharpness, as text in `analysis`. `reference_image`: a file of this host (`/files/{id}/download`) or an ' +
      'http(s) URL (public addresses only, 25 MB, 15 s).',
    body: ImageAnalysisRequest,
    responses: { 200: result, 400: badSource },
    handler: async ({ body, user, tenant }) => {
      const userId = user.id;
      const bytes = await sources.source(tenant, userId, body.reference_image, 'reference_image');
      const vision = providers.vision;
      return tools.run(tenant, userId, 'analysis', { ...body }, undefined, async () => ({
        analysis: vision ? await vision.analyze(body.prompt, bytes) : await analyzeImage(bytes, body.prompt),
      }));
    },
  });

  route<VectorizeRequest>({
    method: 'post',
    path: '/imgtool-vectorize',
    summary: 'Trace an image into a colour SVG',
    description:
      'Colour quantization and path tracing (imagetracerjs, in a worker thread), on the image scaled to 1024 px at ' +
      'most. `prompt` guides the detail: "logo", "flat", "simple" trace 8 colours, "detailed", "photo" 32, else 16. ' +
      'The SVG is saved under `folder_path` (default `/generated`).',
    body: VectorizeRequest,
    responses: { 200: result, 400: badSource },
    handler: async ({ body, user, tenant }) => {
      const userId = user.id;
      const bytes = await sources.source(tenant, userId, body.reference_image, 'reference_image');
      return tools.run(tenant, userId, 'vectorize', { ...body }, body.folder_path, async () => ({
        images: [{ bytes: await vectorizeImage(bytes, body.prompt), extension: 'svg' }],
      }));
    },
  });

  route<RemoveBackgroundRequest>({
    method: 'post',
    path: '/imgtool-remove-background',
    summary: 'Make the plain background of a product shot transparent',
    description:
      'The background colour is read from the border and every border-connected pixel close to it becomes ' +
      'transparent (flood fill in a worker thread), with soft edges. Suited to product shots on a plain ' +
      'background. The PNG is saved under `folder_path` (default `/generated`).',
    body: RemoveBackgroundRequest,
    responses: { 200: result, 400: badSource },
    handler: async ({ body, user, tenant }) => {
      const userId = user.id;
      const bytes = await sources.source(tenant, userId, body.reference_image, 'reference_image');
      return tools.run(tenant, userId, 'remove-background', { ...body }, body.folder_path, async () => ({
        images: [{ bytes: await removeBackground(bytes), extension: 'png' }],
      }));
    },
  });

  route<UpscaleRequest>({
    method: 'post',
    path: '/imgtool-upscale',
    summary: 'Upscale an image of this host by 1-4',
    description:
      '`clarity` (default): Lanczos-3 resampling to exactly `scale_factor` times the size, as PNG, saved under ' +
      '`folder_path` (default `/generated`). `image_path`: the file record’s `path`, `/files/{id}/download` or the file id. `generative`: ' +
      'super-resolution by a model. With the predictions provider (IMAGE_PREDICTIONS_*) the answer is PROCESSING and ' +
      'the operation completes in the background (GET /image-operations/{id}, WebSocket image-operations); without it ' +
      'the local ESRGAN-slim model (a worker thread, sources up to 1024 x 1024) answers when done.',
    body: UpscaleRequest,
    responses: { 200: result, 400: badSource },
    handler: async ({ body, user, tenant }) => {
      const userId = user.id;
      const factor = body.scale_factor ?? 2;
      if (body.mode === 'generative') {
        const source = await sources.source(tenant, userId, body.image_path, 'image_path', false);
        const input = { ...body, scale_factor: factor };
        const predictions = providers.predictions;
        if (predictions) {
          return tools.runJob(
            tenant,
            userId,
            'upscale',
            input,
            body.folder_path,
            upscaleJob(predictions, source, factor),
          );
        }
        const meta = await sharp(source).metadata();
        if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_LOCAL_GENERATIVE_PIXELS) {
          throw new ValidationError(
            `The local model upscales images up to ${MAX_LOCAL_GENERATIVE_PIXELS} pixels; set ${PREDICTION_VARIABLES.join(', ')} for larger ones`,
            [{ field: 'image_path', message: 'too large for the local model' }],
          );
        }
        return tools.run(tenant, userId, 'upscale', input, body.folder_path, async () => ({
          images: [{ bytes: await upscaleGenerative(source, factor), extension: 'png' }],
        }));
      }
      const bytes = await sources.source(tenant, userId, body.image_path, 'image_path', false);
      const meta = await sharp(bytes).metadata();
      if ((meta.width ?? 0) * (meta.height ?? 0) * factor * factor > MAX_UPSCALED_PIXELS) {
        throw new ValidationError(`The upscaled image would exceed ${MAX_UPSCALED_PIXELS} pixels`, [
          { field: 'scale_factor', message: 'too large for this image' },
        ]);
      }
      return tools.run(
        tenant,
        userId,
        'upscale',
        { ...body, scale_factor: factor, mode: 'clarity' },
        body.folder_path,
        async () => ({
          images: [{ bytes: await upscaleClarity(bytes, factor), extension: 'png' }],
        }),
      );
    },
  });

  route<CreateStyleRequest>({
    method: 'post',
    path: '/imgtool-create-style',
    summary: 'Create a reusable style from reference images',
    description:
      '`reference_images`: 1-8 files of this host (record `path`s, `/files/{id}/download` or ids). The palette is read from them ' +
      '(the most frequent colours after quantization); without a description one is written from the palette.',
    body: CreateStyleRequest,
    status: 201,
    responses: { 201: { description: 'The style', schema: CustomStyle }, 400: badSource },
    handler: ({ body, user, tenant }) => {
      const userId = user.id;
      return styles.createStyle(tenant, userId, body);
    },
  });

  // Every route of section 4.2 counts toward the AI limit (DECISIONS.md section 3), the style reads too.
  route(
    {
      method: 'get',
      path: '/imgtool-list-styles',
      summary: 'The custom styles of the tenant, newest first',
      responses: { 200: { description: 'The styles', schema: CustomStyleList } },
      handler: ({ tenant }) => styles.listStyles(tenant),
    },
    aiRoute,
  );

  route(
    {
      method: 'get',
      path: '/imgtool-get-style/:style_id',
      summary: 'One custom style of the tenant',
      responses: { 200: { description: 'The style', schema: CustomStyle } },
      handler: ({ params, tenant }) => styles.getStyle(tenant, params.style_id),
    },
    aiRoute,
  );

  // Polling an operation is not a tool call: the standard limit.
  route(
    {
      method: 'get',
      path: '/image-operations/:operation_id',
      summary: 'One of the caller’s image operations',
      description: 'The same result shape the tool answered; `PROCESSING` until it ends.',
      responses: { 200: { description: 'The operation', schema: ImageOperationResult } },
      handler: ({ params, user, tenant }) => {
        const userId = user.id;
        return tools.get(tenant, userId, params.operation_id);
      },
    },
    signedIn,
  );
}
