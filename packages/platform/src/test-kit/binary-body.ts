import type request from 'supertest';

/** supertest's parser for binary bodies (downloads, exports): the bytes as one Buffer. */
export function binary(res: request.Response, done: (error: Error | null, body: Buffer) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}
