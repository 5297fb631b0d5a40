import pino, { type DestinationStream, type Logger } from 'pino';
import { currentContext } from './context';

export type { Logger } from 'pino';

export interface LoggerOptions {
  service: string;
  level: string;
  /** Where JSON lines go (stdout by default); tests pass a stream to read them. */
  destination?: DestinationStream;
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
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
        censor: '[redacted]',
      },
    },
    options.destination,
  );
}
