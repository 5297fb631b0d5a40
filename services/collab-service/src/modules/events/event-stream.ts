import { drainedOrClosed } from '@hwp/platform';
import type { Request, Response } from 'express';

/**
 * One SSE message encoded once for every stream it goes to: its bytes, and the same bytes framed as
 * one HTTP/1.1 chunk (size line, bytes, CRLF).
 */
export interface EncodedMessage {
  bytes: Buffer;
  chunk: Buffer;
}

const CRLF = Buffer.from('\r\n');

export function encodeMessage(text: string): EncodedMessage {
  const bytes = Buffer.from(text);
  return { bytes, chunk: Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, CRLF]) };
}

/**
 * The heartbeat, a comment line that clients ignore: it keeps proxies and load balancers from
 * idling a quiet stream out. Encoded once for every stream.
 */
export const HEARTBEAT: EncodedMessage = encodeMessage(': heartbeat\n\n');

/** Where the hub writes one client's stream. */
export interface EventSink {
  /** Writes a chunk; false once the client has more than MAX_BUFFERED_BYTES unread. */
  write(chunk: string | Buffer): boolean;
  /** Writes an encoded message, as `write` does. */
  writeMessage(message: EncodedMessage): boolean;
  /** Resolves when what was written has been handed to the socket (or the stream ended). */
  drained(): Promise<void>;
  /** Ends the stream; the client reconnects after its `retry:` delay. */
  close(): void;
}

/** Unread output a client may accumulate before it is cut off (it then replays on reconnect). */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * Starts a Server-Sent Events response: headers sent at once, nothing buffered or compressed on the
 * way (`no-transform` also keeps any compression middleware or proxy off it; nginx honours
 * `X-Accel-Buffering: no`), the socket without idle timeout or Nagle delay, and the `retry:` hint.
 */
export function openEventStream(req: Request, res: Response, retryMs: number): EventSink {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  req.socket.setTimeout(0);
  req.socket.setNoDelay(true);
  req.socket.setKeepAlive(true);
  res.flushHeaders();
  res.write(`retry: ${retryMs}\n\n`);

  const open = () => !res.writableEnded && !res.destroyed;
  const write = (chunk: string | Buffer) => {
    if (!open()) return true;
    // The buffered length is only worth reading once the socket stopped taking writes at once.
    return res.write(chunk) || res.writableLength <= MAX_BUFFERED_BYTES;
  };
  return {
    write,
    writeMessage(message) {
      const socket = res.socket;
      // A chunked response (HTTP/1.1, the usual case) gets the message as its ready-made chunk,
      // straight on the socket: one write of a buffer shared by every stream, where res.write
      // frames it anew for each (size, CRLF, data, CRLF through a corked socket). Bytes that
      // res.write queued before stay ahead of it: both go through the socket's own queue in order.
      if (!open() || !res.chunkedEncoding || !socket) return write(message.bytes);
      // An empty chunk would end the response; a socket the client already ended takes no writes
      // (its close is on its way and ends the stream).
      if (message.bytes.length === 0 || !socket.writable) return true;
      return socket.write(message.chunk) || socket.writableLength <= MAX_BUFFERED_BYTES;
    },
    drained() {
      // Messages may have gone to the socket directly (writeMessage): its queue comes first. A
      // response without its socket yet (a pipelined request waiting its turn) queues in itself.
      const socket = res.socket;
      const full = !open() ? null : socket?.writableNeedDrain ? socket : res.writableNeedDrain ? res : null;
      return full ? drainedOrClosed(full, res) : Promise.resolve();
    },
    close() {
      if (open()) res.end();
    },
  };
}
