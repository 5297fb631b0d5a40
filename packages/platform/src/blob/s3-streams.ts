// Stream plumbing of S3BlobStore.put(): peek at a body's first part, then replay it with the rest.
import { type Readable, Writable } from 'node:stream';

export function discard(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}

export interface StreamStart {
  chunks: Buffer[];
  ended: boolean;
  iterator: AsyncIterator<unknown>;
}

export async function readUpTo(body: Readable, limit: number): Promise<StreamStart> {
  const iterator: AsyncIterator<unknown> = body[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let bytes = 0;
  while (bytes <= limit) {
    const next = await iterator.next();
    if (next.done) return { chunks, ended: true, iterator };
    const chunk = toBuffer(next.value);
    chunks.push(chunk);
    bytes += chunk.length;
  }
  return { chunks, ended: false, iterator };
}

/** The bytes already read, then the rest of the stream; closing early closes the source. */
export async function* replay(chunks: Buffer[], iterator: AsyncIterator<unknown>): AsyncGenerator<Buffer> {
  try {
    yield* chunks;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield toBuffer(next.value);
    }
  } finally {
    await iterator.return?.();
  }
}

export function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk);
  throw new TypeError('blob bodies must stream bytes or strings');
}
