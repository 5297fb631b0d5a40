import { connect, type Socket } from 'node:net';
import type { Readable } from 'node:stream';

/** What clamd said of a stream. */
export type ClamdVerdict = { infected: false } | { infected: true; signature: string };

export class ClamdUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClamdUnavailableError';
  }
}

const CHUNK = 64 * 1024;

/**
 * A clamd client for `zINSTREAM` over TCP (clamd's documented protocol: the command, then chunks
 * each prefixed by its 4-byte big-endian length, then a zero length; the answer is
 * `stream: OK` or `stream: <signature> FOUND`). Failing to reach or hear from clamd throws
 * ClamdUnavailableError, so callers can fail closed.
 */
export class ClamdClient {
  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly timeoutMs = 60_000,
  ) {}

  async scan(body: Readable): Promise<ClamdVerdict> {
    const socket = await this.open();
    try {
      const answer = this.answerOf(socket);
      socket.write('zINSTREAM\0');
      for await (const chunk of body) {
        const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
        for (let at = 0; at < data.length; at += CHUNK) {
          const piece = data.subarray(at, at + CHUNK);
          const size = Buffer.alloc(4);
          size.writeUInt32BE(piece.length);
          if (!socket.write(Buffer.concat([size, piece]))) await new Promise((r) => socket.once('drain', r));
        }
      }
      socket.write(Buffer.alloc(4));
      return parseAnswer(await answer);
    } finally {
      socket.destroy();
    }
  }

  /** `PING` -> `PONG`: for readiness. */
  async ping(): Promise<void> {
    const socket = await this.open();
    try {
      const answer = this.answerOf(socket);
      socket.write('zPING\0');
      if ((await answer) !== 'PONG') throw new ClamdUnavailableError('clamd did not answer PONG');
    } finally {
      socket.destroy();
    }
  }

  private open(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: this.host, port: this.port });
      socket.setTimeout(this.timeoutMs);
      socket.once('connect', () => resolve(socket));
      socket.once('error', (error) =>
        reject(
          new ClamdUnavailableError(`clamd at ${this.host}:${this.port}: ${error.message}`, { cause: error }),
        ),
      );
      socket.once('timeout', () => {
        socket.destroy();
        reject(new ClamdUnavailableError(`clamd at ${this.host}:${this.port} timed out`));
      });
    });
  }

  /** The NUL-terminated reply. */
  private answerOf(socket: Socket): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const end = text.indexOf('\0');
        if (end >= 0) resolve(text.slice(0, end).trim());
      });
      socket.once('end', () =>
        text
          ? resolve(text.replace(/\0$/, '').trim())
          : reject(new ClamdUnavailableError('clamd closed the connection without an answer')),
      );
      socket.once('error', (error) =>
        reject(new ClamdUnavailableError(`clamd: ${error.message}`, { cause: error })),
      );
      socket.once('timeout', () => reject(new ClamdUnavailableError('clamd timed out')));
    });
  }
}

export function parseAnswer(answer: string): ClamdVerdict {
  if (/^stream: OK$/.test(answer)) return { infected: false };
  const found = /^stream: (.+) FOUND$/.exec(answer);
  if (found) return { infected: true, signature: found[1] };
  // `INSTREAM size limit exceeded. ERROR` and the like: clamd did not judge the stream.
  throw new ClamdUnavailableError(`clamd could not scan the stream: ${answer}`);
}
