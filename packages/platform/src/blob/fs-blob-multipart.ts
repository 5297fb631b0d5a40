// Multipart staging of FsBlobStore: one folder per upload with its manifest and the parts received so far.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  type CompletedPart,
  DEFAULT_CONTENT_TYPE,
  type MultipartUpload,
  MultipartUploadNotFoundError,
  type PutOptions,
} from './blob-store';
import { normalizeMetadata, unquoteEtag } from './blob-validation';
import { isMissing, writeAtomically } from './fs-blob-files';

export interface UploadManifest {
  key: string;
  contentType: string;
  metadata: Record<string, string>;
}

const UPLOAD_ID = /^[0-9a-f]{32}$/;

/** The multipart staging tree of an FsBlobStore (`<root>/multipart`). */
export class FsMultipartStaging {
  constructor(private readonly multipartDir: string) {}

  async create(key: string, options: PutOptions): Promise<MultipartUpload> {
    const uploadId = randomBytes(16).toString('hex');
    const dir = this.uploadDir(uploadId);
    await mkdir(dir, { recursive: true });
    const manifest: UploadManifest = {
      key,
      contentType: options.contentType ?? DEFAULT_CONTENT_TYPE,
      metadata: normalizeMetadata(options.metadata),
    };
    await writeFile(path.join(dir, 'upload.json'), JSON.stringify(manifest));
    return { uploadId, key };
  }

  /** Stores one part; returns its ETag (the part's sha256). */
  async writePart(upload: MultipartUpload, partNumber: number, body: Readable | Buffer): Promise<string> {
    await this.readManifest(upload);
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    try {
      // No parent creation: if the upload was aborted meanwhile, the part must fail rather than revive it.
      const written = await writeAtomically(this.partPath(upload.uploadId, partNumber), source, false);
      return written.sha256;
    } catch (error) {
      if (isMissing(error)) throw new MultipartUploadNotFoundError(upload.uploadId);
      throw error;
    }
  }

  /** Idempotent like delete(): aborting an unknown or finished upload is not an error. */
  async abort(upload: MultipartUpload): Promise<void> {
    if (!UPLOAD_ID.test(upload.uploadId)) return;
    try {
      await this.readManifest(upload);
    } catch (error) {
      if (error instanceof MultipartUploadNotFoundError) return;
      throw error;
    }
    await this.remove(upload.uploadId);
  }

  /**
   * The staging folders under `prefix` untouched since before `startedBefore`, removed. The folder's
   * mtime moves with each part written into it (birthtime is not kept by every filesystem).
   */
  async abortStartedBefore(startedBefore: Date, prefix: string): Promise<number> {
    let ids: string[];
    try {
      ids = await readdir(this.multipartDir);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    let aborted = 0;
    for (const uploadId of ids.filter((id) => UPLOAD_ID.test(id))) {
      const dir = this.uploadDir(uploadId);
      let key: string | undefined;
      try {
        // A folder whose manifest was never written (a crash in create) counts as started when made.
        key = (JSON.parse(await readFile(path.join(dir, 'upload.json'), 'utf8')) as UploadManifest).key;
      } catch {
        key = undefined;
      }
      try {
        if ((await stat(dir)).mtime >= startedBefore) continue;
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      if (key !== undefined && !key.startsWith(prefix)) continue;
      await this.remove(uploadId);
      aborted++;
    }
    return aborted;
  }

  async remove(uploadId: string): Promise<void> {
    await rm(this.uploadDir(uploadId), { recursive: true, force: true });
  }

  /** Throws for ids we could not have issued, which also keeps path separators out of the staging path. */
  uploadDir(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new MultipartUploadNotFoundError(uploadId);
    return path.join(this.multipartDir, uploadId);
  }

  async readManifest(upload: MultipartUpload): Promise<UploadManifest> {
    let manifest: UploadManifest;
    try {
      manifest = JSON.parse(
        await readFile(path.join(this.uploadDir(upload.uploadId), 'upload.json'), 'utf8'),
      );
    } catch (error) {
      if (isMissing(error)) throw new MultipartUploadNotFoundError(upload.uploadId);
      throw error;
    }
    // An upload id only counts together with the key it was created for, as on S3.
    if (manifest.key !== upload.key) throw new MultipartUploadNotFoundError(upload.uploadId);
    return manifest;
  }

  /** Concatenates the parts in order, checking each against the ETag the client got for it. */
  async *readParts(uploadId: string, parts: CompletedPart[]): AsyncGenerator<Buffer> {
    for (const part of parts) {
      const hash = createHash('sha256');
      const stream = createReadStream(this.partPath(uploadId, part.partNumber));
      try {
        for await (const chunk of stream) {
          hash.update(chunk);
          yield chunk;
        }
      } catch (error) {
        if (isMissing(error))
          throw new Error(`part ${part.partNumber} of upload ${uploadId} was never uploaded`);
        throw error;
      }
      if (hash.digest('hex') !== unquoteEtag(part.etag)) {
        throw new Error(`part ${part.partNumber} of upload ${uploadId} does not match ETag ${part.etag}`);
      }
    }
  }

  private partPath(uploadId: string, partNumber: number): string {
    return path.join(this.uploadDir(uploadId), `part-${String(partNumber).padStart(5, '0')}`);
  }
}
