import { AppError } from '@hwp/platform';
import type { ApiConfig } from '../../../config';
import { fetchRemoteImage } from '../remote-image';
import { OpenAiImages, Predictions, StabilityImages, VisionChat } from './adapters';
import { type ProviderEndpoint, ProviderError } from './provider-http';

/** The configured providers; a missing one makes its routes answer 503. */
export interface ImageProviders {
  a?: OpenAiImages;
  b?: StabilityImages;
  predictions?: Predictions;
  vision?: VisionChat;
}

const RESULT_MAX_BYTES = 50 * 1024 * 1024;

/** 503 `unavailable` naming the variables that configure the missing provider. */
export function unavailable(what: string, variables: string[]): AppError {
  return new AppError('unavailable', `${what} needs a provider: set ${variables.join(', ')}`);
}

/**
 * A result image a provider answered as a URL: from the provider's own origin it is read as is
 * (without the API key), anything else with the SSRF rules of reference images.
 */
function downloader(base: string, timeoutMs: number) {
  const origin = new URL(base).origin;
  return async (url: string): Promise<Buffer> => {
    if (new URL(url, base).origin !== origin) {
      return fetchRemoteImage(url, { maxBytes: RESULT_MAX_BYTES, timeoutMs }).catch(() => {
        throw new ProviderError('the provider answered an image URL that could not be read', false);
      });
    }
    // No redirects: they would leave the provider's origin without the checks above.
    const res = await fetch(new URL(url, base), {
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (!res.ok || bytes.length > RESULT_MAX_BYTES)
      throw new ProviderError(`the provider's image URL answered ${res.status}`, true);
    return bytes;
  };
}

export function providersFrom(config: ApiConfig): ImageProviders {
  const timeoutMs = config.IMAGE_PROVIDER_TIMEOUT_MS;
  const endpoint = (url?: string, key?: string, model?: string): ProviderEndpoint | undefined =>
    url && key && model ? { url, key, model, timeoutMs } : undefined;
  const a = endpoint(config.IMAGE_PROVIDER_A_URL, config.IMAGE_PROVIDER_A_KEY, config.IMAGE_PROVIDER_A_MODEL);
  const b = endpoint(config.IMAGE_PROVIDER_B_URL, config.IMAGE_PROVIDER_B_KEY, config.IMAGE_PROVIDER_B_MODEL);
  const predictions = endpoint(
    config.IMAGE_PREDICTIONS_URL,
    config.IMAGE_PREDICTIONS_KEY,
    config.IMAGE_PREDICTIONS_MODEL,
  );
  const vision = endpoint(config.IMAGE_VISION_URL, config.IMAGE_VISION_KEY, config.IMAGE_VISION_MODEL);
  return {
    a: a && new OpenAiImages(a, downloader(a.url, timeoutMs)),
    b: b && new StabilityImages(b),
    predictions: predictions && new Predictions(predictions, downloader(predictions.url, timeoutMs)),
    vision: vision && new VisionChat(vision),
  };
}
