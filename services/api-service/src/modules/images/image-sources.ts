import { MAX_SOURCE_IMAGE_BYTES, MAX_SOURCE_IMAGE_PIXELS } from '@hwp/contracts';
import { type BlobStore, ValidationError } from '@hwp/platform';
import { readAll } from '../files/analysis';
import type { FilesService } from '../files/files.service';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import { decodable } from './local-engine';
import { fetchRemoteImage } from './remote-image';

export interface ImageSourceOptions {
  /** Remote fetches of reference images. */
  fetchTimeoutMs: number;
  allowedCidrs: string[];
  /** Where clients reach this host (PUBLIC_API_URL): its own URLs name its files. */
  publicBase?: string;
}

const FILE_PATH = /^(?:https?:\/\/[^/]+)?\/files\/([0-9a-f-]{36})(?:\/download)?\/?$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The source images of the tools: this host's files (read from storage with the caller's
 * permissions) or remote images fetched with the SSRF rules.
 */
export class ImageSources {
  constructor(
    private readonly blobs: BlobStore,
    private readonly files: FilesService,
    private readonly options: ImageSourceOptions,
  ) {}

  /**
   * The bytes of a source image: a file of this host (`/files/{id}/download`, absolute or not, or
   * the id) the caller may view, or, when `remote`, an http(s) URL. 400 for anything that is not a
   * readable image within the size limits.
   */
  async source(
    tenant: ResolvedTenant,
    userId: string,
    reference: string,
    field: string,
    remote = true,
  ): Promise<Buffer> {
    const given = reference.trim();
    // A URL this host handed out (generated_images) is one of its files, under a base path or not.
    const own = this.options.publicBase;
    const trimmed = own && given.startsWith(`${own}/files/`) ? given.slice(own.length) : given;
    const fileId = UUID.test(trimmed) ? trimmed : FILE_PATH.exec(trimmed)?.[1];
    // A file record's `path` (section 2.4: virtual folder path plus name), as 2.6 names sources.
    const byPath = !fileId && (trimmed.startsWith('/') || (!remote && !/^[a-z][a-z0-9+.-]*:/i.test(trimmed)));
    let bytes: Buffer;
    if (fileId || byPath) {
      const { revision } = fileId
        ? await this.files.open(tenant, userId, fileId.toLowerCase())
        : await this.files.openByPath(
            tenant,
            userId,
            trimmed.startsWith('/') ? trimmed : `/${trimmed}`,
            field,
          );
      if (revision.size > MAX_SOURCE_IMAGE_BYTES)
        throw invalid(field, `The image is larger than ${MAX_SOURCE_IMAGE_BYTES} bytes`);
      bytes = await readAll((await this.blobs.read(revision.blobKey)).body);
    } else if (remote) {
      bytes = await fetchRemoteImage(trimmed, {
        maxBytes: MAX_SOURCE_IMAGE_BYTES,
        timeoutMs: this.options.fetchTimeoutMs,
        allowedCidrs: this.options.allowedCidrs,
      });
    } else {
      throw invalid(field, 'Name a file of this host: its path, /files/{id}/download or the file id');
    }
    try {
      await decodable(bytes, MAX_SOURCE_IMAGE_PIXELS);
    } catch {
      throw invalid(
        field,
        'The source is not an image this host reads (PNG, JPEG, WebP, GIF, TIFF, AVIF, SVG)',
      );
    }
    return bytes;
  }
}

function invalid(field: string, detail: string): ValidationError {
  return new ValidationError(detail, [{ field, message: detail }]);
}
