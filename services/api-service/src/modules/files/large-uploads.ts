import type { UploadCompleteRequest, UploadUrlRequest, UploadUrlResponse } from '@hwp/contracts';
import {
  AppError,
  type BlobStore,
  MultipartUploadNotFoundError,
  NotFoundError,
  newId,
  queryRows,
  ValidationError,
} from '@hwp/platform';
import { type DataSource, LessThan } from 'typeorm';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import { revisionKey, tooLarge } from './blob-upload';
import { fileName, folderPath } from './file-names';
import { FileUploadEntity } from './file-upload.entity';
import type { FilesService } from './files.service';

/** Parts of 8 MiB (S3 wants at least 5 MiB for every part but the last). */
const PART_SIZE = 8 * 1024 * 1024;
const URL_SECONDS = 60 * 60;

/**
 * The large-file flow (DECISIONS.md section 3): `POST /files/upload-url` opens a multipart upload
 * and pre-signs a URL per part; the client PUTs the parts straight to storage, then
 * `POST /files/upload-complete` assembles them, checks the size, and registers the file like an
 * upload (new file or revision). An upload not completed within an hour is aborted.
 */
export class LargeUploads {
  constructor(
    private readonly blobs: BlobStore,
    private readonly files: FilesService,
    private readonly maxBytes: number,
  ) {}

  async start(tenant: ResolvedTenant, userId: string, request: UploadUrlRequest): Promise<UploadUrlResponse> {
    const name = fileName(request.name);
    const folder = folderPath(request.folder_path);
    if (request.size > this.maxBytes) throw tooLarge(this.maxBytes);
    await this.sweep(tenant);
    const id = newId();
    const key = revisionKey(tenant.id, id);
    const multipart = await this.blobs.createMultipartUpload(key, {
      contentType: 'application/octet-stream',
    });
    const count = Math.max(1, Math.ceil(request.size / PART_SIZE));
    const parts = [];
    for (let part = 1; part <= count; part++) {
      // Each URL takes exactly its part's size: a URL issued for a 1-byte file cannot store 250 MB.
      const contentLength = part < count ? PART_SIZE : request.size - (count - 1) * PART_SIZE;
      parts.push({
        part_number: part,
        size: contentLength,
        url: await this.blobs.presignUploadPart(multipart, part, { expiresIn: URL_SECONDS, contentLength }),
      });
    }
    const now = new Date();
    const expiresAt = new Date(now.getTime() + URL_SECONDS * 1000);
    await tenant.scope.repo(FileUploadEntity).insert({
      id,
      userId,
      multipartId: multipart.uploadId,
      blobKey: key,
      name,
      folderPath: folder,
      size: request.size,
      expiresAt,
      createdAt: now,
    });
    return { upload_id: id, part_size: PART_SIZE, parts, expires_at: expiresAt.toISOString() };
  }

  /**
   * Aborts every tenant's uploads whose hour is over (a client that died mid-upload leaves its parts
   * in storage otherwise), then any multipart upload in storage older than that hour, on a schedule.
   * Rows are claimed with SKIP LOCKED and aborting is idempotent, so replicas may run it at once.
   */
  async sweepExpired(dataSource: DataSource, now = new Date()): Promise<number> {
    const claimed = await dataSource.transaction((manager) =>
      queryRows<{ multipart_id: string; blob_key: string }>(
        manager,
        `DELETE FROM file_uploads WHERE id IN (
           SELECT id FROM file_uploads WHERE expires_at < $1 ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED)
         RETURNING multipart_id, blob_key`,
        [now],
      ),
    );
    for (const upload of claimed) {
      await this.blobs
        .abortMultipartUpload({ uploadId: upload.multipart_id, key: upload.blob_key })
        .catch(() => undefined);
    }
    // Uploads no row knows of: a process killed mid-upload (a streamed put goes to S3 as a multipart
    // upload) or between opening one and writing its row. None lives past the hour a part URL lasts.
    const orphans = await this.blobs.abortMultipartUploadsStartedBefore(
      new Date(now.getTime() - URL_SECONDS * 1000),
      'tenants/',
    );
    return claimed.length + orphans;
  }

  /** Aborts the tenant's uploads whose hour is over (their parts would otherwise stay in storage). */
  private async sweep(tenant: ResolvedTenant): Promise<void> {
    const uploads = tenant.scope.repo(FileUploadEntity);
    const expired = await uploads.find({ where: { expiresAt: LessThan(new Date()) }, take: 100 });
    for (const upload of expired) {
      if ((await uploads.delete({ id: upload.id })) === 0) continue;
      await this.blobs
        .abortMultipartUpload({ uploadId: upload.multipartId, key: upload.blobKey })
        .catch(() => undefined);
    }
  }

  async complete(tenant: ResolvedTenant, userId: string, request: UploadCompleteRequest) {
    const uploads = tenant.scope.repo(FileUploadEntity);
    const upload = await uploads.findOne({ id: request.upload_id, userId });
    if (!upload || upload.expiresAt < new Date()) throw new NotFoundError('No such upload in progress');
    // Claimed once: a second complete of the same upload finds nothing.
    if ((await uploads.delete({ id: upload.id })) === 0)
      throw new NotFoundError('No such upload in progress');
    const multipart = { uploadId: upload.multipartId, key: upload.blobKey };
    let stored: { size: number; sha256: string };
    try {
      stored = await this.blobs.completeMultipartUpload(
        multipart,
        request.parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })),
      );
    } catch (error) {
      await this.blobs.abortMultipartUpload(multipart).catch(() => undefined);
      if (error instanceof MultipartUploadNotFoundError)
        throw new NotFoundError('No such upload in progress');
      throw new AppError(
        'validation_failed',
        `The parts could not be assembled: ${(error as Error).message}`,
      );
    }
    if (stored.size !== upload.size) {
      await this.blobs.delete(upload.blobKey).catch(() => undefined);
      throw new ValidationError(`The parts hold ${stored.size} bytes, the upload announced ${upload.size}`, [
        { field: 'parts', message: 'do not add up to the announced size' },
      ]);
    }
    return this.files.register(
      tenant,
      userId,
      {
        id: upload.id,
        key: upload.blobKey,
        size: stored.size,
        sha256: stored.sha256,
        originalName: upload.name,
        clientType: '',
        field: 'file',
      },
      { ...request, folder_path: upload.folderPath },
    );
  }
}
