/** A provider call that failed: `transient` ones (timeouts, 429, 5xx) were retried before giving up. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface ProviderEndpoint {
  /** Base URL, e.g. `https://api.openai.com`. */
  url: string;
  key: string;
  model: string;
  timeoutMs: number;
}

const ATTEMPTS = 3;
const MAX_WAIT_MS = 20_000;

/** Seconds or an HTTP date, as `Retry-After` says; null when absent or unreadable. */
function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * One provider request with the provider's timeout, retried (at most three attempts) on 429 and 5xx
 * answers and on timeouts, waiting as `Retry-After` says or backing off exponentially. The last
 * answer is returned whatever its status; `describe` turns a failed one into the error message.
 */
export async function providerFetch(
  endpoint: ProviderEndpoint,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | FormData },
  describe: (res: Response, body: string) => string,
): Promise<Response> {
  const url = new URL(path, endpoint.url.endsWith('/') ? endpoint.url : `${endpoint.url}/`);
  let timeouts = 0;
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method: init.method ?? 'POST',
        headers: { authorization: `Bearer ${endpoint.key}`, ...init.headers },
        body: init.body,
        signal: AbortSignal.timeout(endpoint.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      // By name: the error may come from another realm (a test sandbox), where instanceof fails.
      const name = (error as { name?: unknown } | null)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') timeouts++;
      if (attempt < ATTEMPTS) {
        await sleep(backoff(attempt));
        continue;
      }
      throw new ProviderError(
        timeouts > 0
          ? `the provider did not answer within ${endpoint.timeoutMs} ms (${attempt} attempts)`
          : 'the provider could not be reached',
        true,
      );
    }
    const transient = res.status === 429 || res.status >= 500;
    if (transient && attempt < ATTEMPTS) {
      const wait = retryAfterMs(res.headers.get('retry-after')) ?? backoff(attempt);
      await res.arrayBuffer().catch(() => undefined);
      if (wait <= MAX_WAIT_MS) {
        await sleep(wait);
        continue;
      }
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    throw new ProviderError(describe(res, text), transient);
  }
}

function backoff(attempt: number): number {
  return Math.min(8_000, 500 * 2 ** (attempt - 1));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `{error:{message}}` (OpenAI dialect), `{errors:[...]}`/`{name}` (Stability), `{detail}` (Replicate), or the status. */
export function providerMessage(res: Response, body: string): string {
  try {
    const parsed = JSON.parse(body) as {
      error?: { message?: string } | string;
      errors?: string[];
      name?: string;
      detail?: string;
      message?: string;
    };
    const message =
      (typeof parsed.error === 'object' ? parsed.error?.message : parsed.error) ??
      parsed.errors?.join('; ') ??
      parsed.detail ??
      parsed.message;
    if (parsed.name === 'content_moderation')
      return `the provider refused the request as unsafe content${message ? `: ${message}` : ''}`;
    if (message) return `the provider answered ${res.status}: ${message.slice(0, 300)}`;
  } catch {
    // not JSON
  }
  return `the provider answered ${res.status}`;
}

export function dataUri(bytes: Buffer, type = 'image/png'): string {
  return `data:${type};base64,${bytes.toString('base64')}`;
}
