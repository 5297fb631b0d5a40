import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** Pass-through that hashes and counts the bytes on their way, so puts never need a second read. */
export class HashingStream extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private bytes = 0;
  private digest?: string;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.digest = this.hash.digest('hex');
    callback();
  }

  /**
   * Not named `size` or `length`: lib-storage's Upload reads those on a Body as its total length, and a
   * count still growing would make it expect zero parts.
   */
  get bytesHashed(): number {
    return this.bytes;
  }

  /** Only valid once the stream has ended; asking earlier is a bug, so it throws. */
  get sha256(): string {
    if (this.digest === undefined) throw new Error('sha256 requested before the stream ended');
    return this.digest;
  }
}
