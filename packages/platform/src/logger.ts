import pino, { type DestinationStream, type Logger } from 'pino';
import { currentContext } from './context';

export type { Logger } from 'pino';

export interface LoggerOptions {
  service: string;
  level: string;
  /** Where JSON lines go (stdout by default); tests pass a stream to read them. */
  destination?: DestinationStream;
}

/** Query parameters whose values are credentials: never written to a log line. */
const SECRET_PARAMS =
  /^(token|token_hash|code|otp|password|refresh_token|access_token|authorization|apikey|api_key|secret|signature|x-amz-signature|x-amz-credential|sig)$/i;

/** Keys of logged objects that hold credentials (at any of the first three levels). */
const SECRET_KEYS = ['password', 'token', 'refresh_token', 'access_token', 'authorization', 'otp', 'secret'];
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  ...SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
];

/**
 * A request URL as it may be logged: the values of credential-like query parameters (magic-link
 * tokens, codes, `?token=` on the WebSocket, pre-signed signatures) are replaced by `[redacted]`.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return SECRET_PARAMS.test(name.replace(/\[.*$/, '')) ? `${pair.slice(0, eq)}=[redacted]` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

/** JSON logs; every line written inside a request carries its request id. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin() {
        const ctx = currentContext();
        return ctx ? { requestId: ctx.requestId } : {};
      },
      // Error codes are logged as `code`; one-time codes only ever travel in URLs and bodies, which
      // are redacted (redactUrl) or never logged.
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    options.destination,
  );
}
