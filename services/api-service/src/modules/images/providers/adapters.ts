import {
  dataUri,
  type ProviderEndpoint,
  ProviderError,
  providerFetch,
  providerMessage,
} from './provider-http';

/** Where an adapter reads a result image that it got as a URL (the provider's own storage). */
export type ImageDownload = (url: string) => Promise<Buffer>;

/** Provider A: the OpenAI Images API (`/v1/images/generations`, `/v1/images/edits`). */
export class OpenAiImages {
  constructor(
    private readonly endpoint: ProviderEndpoint,
    private readonly download: ImageDownload,
  ) {}

  async generate(prompt: string, n: number): Promise<Buffer[]> {
    const res = await providerFetch(
      this.endpoint,
      'v1/images/generations',
      {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: this.endpoint.model, prompt, n, size: '1024x1024' }),
      },
      providerMessage,
    );
    return this.images(res);
  }

  /** Image to image: the reference as the image to edit. */
  async edit(prompt: string, image: Buffer, n: number): Promise<Buffer[]> {
    const form = new FormData();
    form.set('model', this.endpoint.model);
    form.set('prompt', prompt);
    form.set('n', String(n));
    form.set('image', new Blob([image], { type: 'image/png' }), 'reference.png');
    const res = await providerFetch(this.endpoint, 'v1/images/edits', { body: form }, providerMessage);
    return this.images(res);
  }

  private async images(res: Response): Promise<Buffer[]> {
    const body = (await res.json()) as { data?: { b64_json?: string; url?: string }[] };
    const items = body.data ?? [];
    if (items.length === 0) throw new ProviderError('the provider answered no image', false);
    return Promise.all(
      items.map((item) => {
        if (item.b64_json) return Buffer.from(item.b64_json, 'base64');
        if (item.url) return this.download(item.url);
        throw new ProviderError('the provider answered an image without data', false);
      }),
    );
  }
}

/** Provider B: the Stability REST v2 dialect (multipart, JSON answers with base64 images). */
export class StabilityImages {
  constructor(private readonly endpoint: ProviderEndpoint) {}

  /** One image per request, as the API makes them; `image` turns it into image-to-image. */
  async generate(prompt: string, negative: string | undefined, n: number, image?: Buffer): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      const form = new FormData();
      form.set('prompt', prompt);
      if (negative) form.set('negative_prompt', negative);
      form.set('output_format', 'png');
      if (image) {
        form.set('image', new Blob([image], { type: 'image/png' }), 'reference.png');
        form.set('strength', '0.6');
      }
      const res = await providerFetch(
        this.endpoint,
        `v2beta/stable-image/generate/${this.endpoint.model}`,
        { headers: { accept: 'application/json' }, body: form },
        providerMessage,
      );
      const body = (await res.json()) as { image?: string; finish_reason?: string };
      if (body.finish_reason === 'CONTENT_FILTERED')
        throw new ProviderError(
          'the provider filtered the result as unsafe content (CONTENT_FILTERED)',
          false,
        );
      if (!body.image) throw new ProviderError('the provider answered no image', false);
      out.push(Buffer.from(body.image, 'base64'));
    }
    return out;
  }
}

export type PredictionState = 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';

/** Long jobs: the Replicate predictions dialect (create, then poll by id). */
export class Predictions {
  constructor(
    private readonly endpoint: ProviderEndpoint,
    /** Reads an output URL. */
    readonly download: ImageDownload,
  ) {}

  async create(input: Record<string, unknown>): Promise<string> {
    const res = await providerFetch(
      this.endpoint,
      'v1/predictions',
      {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ version: this.endpoint.model, input }),
      },
      providerMessage,
    );
    const body = (await res.json()) as { id?: string };
    if (!body.id) throw new ProviderError('the provider answered no prediction id', false);
    return body.id;
  }

  async get(id: string): Promise<{ status: PredictionState; output: string[]; error: string | null }> {
    const res = await providerFetch(
      this.endpoint,
      `v1/predictions/${encodeURIComponent(id)}`,
      { method: 'GET' },
      providerMessage,
    );
    const body = (await res.json()) as {
      status?: PredictionState;
      output?: string | string[] | null;
      error?: string | null;
    };
    const output = body.output == null ? [] : Array.isArray(body.output) ? body.output : [body.output];
    return { status: body.status ?? 'processing', output, error: body.error ?? null };
  }

  /** The input of an upscale prediction. */
  static upscaleInput(image: Buffer, scale: number): Record<string, unknown> {
    return { image: dataUri(image), scale };
  }
}

/** Image analysis through an OpenAI-compatible chat completion with an `image_url` part. */
export class VisionChat {
  constructor(private readonly endpoint: ProviderEndpoint) {}

  async analyze(prompt: string, image: Buffer): Promise<string> {
    const res = await providerFetch(
      this.endpoint,
      'v1/chat/completions',
      {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: this.endpoint.model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: prompt },
                { type: 'image_url', image_url: { url: dataUri(image) } },
              ],
            },
          ],
        }),
      },
      providerMessage,
    );
    const body = (await res.json()) as { choices?: { message?: { content?: string } }[] };
    const text = body.choices?.[0]?.message?.content;
    if (!text) throw new ProviderError('the provider answered no analysis', false);
    return text;
  }
}
