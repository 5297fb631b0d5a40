// The parts of a long stream written to S3 from a fixed set of reused buffers.
import { UploadPartCommand } from '@aws-sdk/client-s3';
import type { CompletedPart, MultipartUpload } from './blob-store';
import type { S3Target } from './s3-protocol';

export interface PartWriterOptions {
  partSize: number;
  /** Parts in flight at once; each holds one buffer of partSize. */
  slots: number;
}

/**
 * Copies the stream into `slots` buffers allocated once and sends each full one as a part, reusing it
 * when S3 has answered: memory stays at slots x partSize however long the stream is (lib-storage's
 * Upload concatenates a fresh buffer per part, which left a 200 MB upload ~80 MB above its start).
 * Reading waits while every buffer is in flight, so a slow S3 slows the sender instead of filling memory.
 * The first failed part stops the writing and is thrown once the others have settled.
 */
export async function writeParts(
  s3: S3Target,
  upload: MultipartUpload,
  chunks: AsyncIterable<Buffer>,
  options: PartWriterOptions,
): Promise<CompletedPart[]> {
  const free: Buffer[] = Array.from({ length: options.slots }, () => Buffer.allocUnsafe(options.partSize));
  const inFlight = new Set<Promise<void>>();
  const parts: CompletedPart[] = [];
  let failure: { error: unknown } | undefined;

  const send = (buffer: Buffer, length: number, partNumber: number) => {
    const sent: Promise<void> = s3.client
      .send(
        new UploadPartCommand({
          Bucket: s3.bucket,
          Key: upload.key,
          UploadId: upload.uploadId,
          PartNumber: partNumber,
          Body: buffer.subarray(0, length),
          ContentLength: length,
        }),
      )
      .then(
        ({ ETag }) => {
          if (ETag) parts.push({ partNumber, etag: ETag });
          else
            failure ??= { error: new Error(`S3 returned no ETag for part ${partNumber} of ${upload.key}`) };
        },
        (error: unknown) => {
          failure ??= { error };
        },
      )
      .finally(() => {
        free.push(buffer);
        inFlight.delete(sent);
      });
    inFlight.add(sent);
  };

  try {
    let current = free.pop() as Buffer;
    let filled = 0;
    let partNumber = 0;
    for await (const chunk of chunks) {
      for (let offset = 0; offset < chunk.length; ) {
        const copied = chunk.copy(current, filled, offset);
        filled += copied;
        offset += copied;
        if (filled < options.partSize) continue;
        send(current, filled, ++partNumber);
        while (free.length === 0) await Promise.race(inFlight);
        if (failure) throw failure.error;
        current = free.pop() as Buffer;
        filled = 0;
      }
    }
    if (filled > 0 || partNumber === 0) send(current, filled, ++partNumber);
    await Promise.all(inFlight);
    if (failure) throw failure.error;
    return parts;
  } finally {
    await Promise.allSettled(inFlight);
  }
}
