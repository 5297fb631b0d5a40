import {
  CreateStyleRequest,
  CustomStyle,
  CustomStyleList,
  ErrorBodyDto,
  ImageAnalysisRequest,
  ImageOperationResult,
  RemoveBackgroundRequest,
  UpscaleRequest,
  VectorizeRequest,
} from '@hwp/contracts';
import { type ApiRouter, AppError, type RouteSpec, ValidationError } from '@hwp/platform';
import type { RequestHandler } from 'express';
import sharp from 'sharp';
import { caller } from '../files/routes/file-routing';
import type { ImageToolsService } from './image-tools.service';
import { analyzeImage, removeBackground, upscaleClarity, vectorizeImage } from './local-engine';

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
  /** authenticate, the AI rate limit (10 a minute per user), tenant resolution. */
  aiRoute: RequestHandler[];
  /** authenticate, the standard limit, tenant resolution. */
  signedIn: RequestHandler[];
}

export function mountImageRoutes(api: ApiRouter, { tools, aiRoute, signedIn }: ImageRouteDeps): void {
  const route = <Body>(spec: Omit<RouteSpec<Body>, 'security' | 'rateLimited' | 'tags'>, before = aiRoute) =>
    api.route<Body>({ ...spec, tags: TAGS, security: ['bearerAuth'], rateLimited: true, before });

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
    handler: async ({ body, req }) => {
      const { userId, tenant } = caller(req);
      const bytes = await tools.source(tenant, userId, body.reference_image, 'reference_image');
      return tools.run(tenant, userId, 'analysis', { ...body }, undefined, async () => ({
        analysis: await analyzeImage(bytes, body.prompt),
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
    handler: async ({ body, req }) => {
      const { userId, tenant } = caller(req);
      const bytes = await tools.source(tenant, userId, body.reference_image, 'reference_image');
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
    handler: async ({ body, req }) => {
      const { userId, tenant } = caller(req);
      const bytes = await tools.source(tenant, userId, body.reference_image, 'reference_image');
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
      '`folder_path` (default `/generated`). `image_path`: `/files/{id}/download` or the file id. `generative` ' +
      'needs an upscaling model this host does not run yet: 503.',
    body: UpscaleRequest,
    responses: {
      200: result,
      400: badSource,
      503: { description: 'mode=generative: no model', schema: ErrorBodyDto },
    },
    handler: async ({ body, req }) => {
      const { userId, tenant } = caller(req);
      if (body.mode === 'generative') {
        throw new AppError(
          'unavailable',
          503,
          'Generative upscaling needs a model this host does not run yet; use mode=clarity',
          {
            retryable: false,
          },
        );
      }
      const factor = body.scale_factor ?? 2;
      const bytes = await tools.source(tenant, userId, body.image_path, 'image_path', false);
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
      '`reference_images`: 1-8 files of this host (`/files/{id}/download` or ids). The palette is read from them ' +
      '(the most frequent colours after quantization); without a description one is written from the palette.',
    body: CreateStyleRequest,
    status: 201,
    responses: { 201: { description: 'The style', schema: CustomStyle }, 400: badSource },
    handler: ({ body, req }) => {
      const { userId, tenant } = caller(req);
      return tools.createStyle(tenant, userId, body);
    },
  });

  route(
    {
      method: 'get',
      path: '/imgtool-list-styles',
      summary: 'The custom styles of the tenant, newest first',
      responses: { 200: { description: 'The styles', schema: CustomStyleList } },
      handler: ({ req }) => tools.listStyles(caller(req).tenant),
    },
    signedIn,
  );

  route(
    {
      method: 'get',
      path: '/imgtool-get-style/:style_id',
      summary: 'One custom style of the tenant',
      responses: { 200: { description: 'The style', schema: CustomStyle } },
      handler: ({ params, req }) => tools.getStyle(caller(req).tenant, params.style_id),
    },
    signedIn,
  );

  route(
    {
      method: 'get',
      path: '/image-operations/:operation_id',
      summary: 'One of the caller’s image operations',
      description: 'The same result shape the tool answered; `PROCESSING` until it ends.',
      responses: { 200: { description: 'The operation', schema: ImageOperationResult } },
      handler: ({ params, req }) => {
        const { userId, tenant } = caller(req);
        return tools.get(tenant, userId, params.operation_id);
      },
    },
    signedIn,
  );
}
