import {
  type CustomStyle,
  type CustomStyleList,
  type ImageOperationResult,
  type ImageOperationUpdatedData,
  type ImageTool,
  MAX_SOURCE_IMAGE_BYTES,
  MAX_SOURCE_IMAGE_PIXELS,
  RoutingKeys,
} from '@hwp/contracts';
import { type BlobStore, type Bus, type Logger, NotFoundError, newId, ValidationError } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import { readAll } from '../files/analysis';
import { revisionKey } from '../files/blob-upload';
import type { FilesService } from '../files/files.service';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import { CustomStyleEntity, ImageOperationEntity } from './image.entities';
import { decodable, paletteOf } from './local-engine';
import { fetchRemoteImage } from './remote-image';

/** What a tool produced: images to save as files, or an analysis text. */
export interface ToolOutput {
  images?: { bytes: Buffer; extension: 'png' | 'svg' }[];
  analysis?: string;
}

export interface ImageToolsOptions {
  /** Remote fetches of reference images. */
  fetchTimeoutMs: number;
  allowedCidrs: string[];
  /** Interval of polling a running prediction, and how long one may run. */
  pollMs: number;
  maxJobMs: number;
  /**
   * Where clients reach this host (PUBLIC_API_URL): `generated_images` are absolute URLs under it.
   * Unset (the embedded default), they stay paths on whichever host answered.
   */
  publicBase?: string;
  /** The tenant as its member `userId` acts in it, for work that outlives the request; null once they left. */
  tenantOf(tenantId: string, userId: string): Promise<ResolvedTenant | null>;
}

/** A long job at a provider: started once, then polled until it ends. */
export interface ProviderJob {
  start(): Promise<string>;
  poll(
    job: string,
  ): Promise<{ done: false } | { done: true; output: ToolOutput } | { done: true; error: string }>;
}

const FILE_PATH = /^(?:https?:\/\/[^/]+)?\/files\/([0-9a-f-]{36})(?:\/download)?\/?$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_FOLDER = '/generated';

function present(row: ImageOperationEntity, publicBase = ''): ImageOperationResult {
  return {
    id: row.id,
    tool: row.tool,
    status: row.status,
    generated_images: row.resultFileIds.map((id) => `${publicBase}/files/${id}/download`),
    analysis: row.analysis,
    error_message: row.errorMessage,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

function presentStyle(row: CustomStyleEntity): CustomStyle {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    reference_images: row.referenceImages,
    palette: row.palette,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * The image tools of section 4.2 that run on this host: every call is stored as an image operation
 * (PROCESSING, then COMPLETED or ERROR, announced as `image.operation.updated.v1`), sources are
 * this host's files (read from storage with the caller's permissions) or remote images fetched
 * with the SSRF rules, and results are saved as files of the tenant under `folder_path`.
 */
export class ImageToolsService {
  constructor(
    private readonly bus: Bus,
    private readonly blobs: BlobStore,
    private readonly files: FilesService,
    private readonly logger: Logger,
    private readonly options: ImageToolsOptions,
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

  /**
   * Runs a tool as a stored operation. The answer is the operation as it ended: COMPLETED with its
   * files or analysis, or ERROR with the reason (a failing tool is never a 500).
   */
  async run(
    tenant: ResolvedTenant,
    userId: string,
    tool: ImageTool,
    input: Record<string, unknown>,
    folder: string | undefined,
    work: () => Promise<ToolOutput>,
  ): Promise<ImageOperationResult> {
    const operation = await this.begin(tenant, userId, tool, input);
    let output: ToolOutput;
    try {
      output = await work();
      operation.resultFileIds = await this.saveAll(tenant, operation, folder, output.images ?? []);
      operation.analysis = output.analysis ?? null;
      operation.status = 'COMPLETED';
    } catch (error) {
      this.logger.warn({ err: error, operation: operation.id, tool }, 'image operation failed');
      failedWith(operation, error instanceof Error ? error.message : String(error));
    }
    operation.completedAt = new Date();
    await this.finish(tenant, operation);
    return present(operation, this.options.publicBase);
  }

  /**
   * Runs a tool as a provider job: the answer is PROCESSING with the operation's id, and the job is
   * polled in the background until it ends (its id is stored, so `resume` picks it up after a
   * restart). A job that cannot start ends the operation as ERROR at once.
   */
  async runJob(
    tenant: ResolvedTenant,
    userId: string,
    tool: ImageTool,
    input: Record<string, unknown>,
    folder: string | undefined,
    job: ProviderJob,
  ): Promise<ImageOperationResult> {
    const operation = await this.begin(tenant, userId, tool, {
      ...input,
      folder_path: folder ?? DEFAULT_FOLDER,
    });
    try {
      operation.providerJob = await job.start();
      await this.operations(tenant).update({ id: operation.id }, { providerJob: operation.providerJob });
    } catch (error) {
      failedWith(operation, error instanceof Error ? error.message : String(error));
      operation.completedAt = new Date();
      await this.finish(tenant, operation);
      return present(operation, this.options.publicBase);
    }
    this.follow(tenant, operation, job);
    return present(operation, this.options.publicBase);
  }

  /** Operations whose provider job was running when this process started: polled again. */
  async resume(manager: EntityManager, jobs: (tool: ImageTool) => ProviderJob | undefined): Promise<number> {
    // Across tenants on purpose: each row is then handled in its own tenant's scope.
    const rows: { id: string; tenant_id: string; user_id: string }[] = await manager.query(
      `SELECT id, tenant_id, user_id FROM image_operations WHERE status = 'PROCESSING' AND provider_job IS NOT NULL`,
    );
    for (const row of rows) {
      const tenant = await this.options.tenantOf(row.tenant_id, row.user_id);
      const operation = tenant ? await this.operations(tenant).findOne({ id: row.id }) : null;
      const job = operation && jobs(operation.tool);
      if (tenant && operation && job) this.follow(tenant, operation, job);
    }
    return rows.length;
  }

  /**
   * Polls the job until it ends, then records the end. Several processes may poll one job (each
   * resumes what was running when it started): the end is recorded by whichever first locks the
   * operation while it is still PROCESSING; the others stop.
   */
  private follow(tenant: ResolvedTenant, operation: ImageOperationEntity, job: ProviderJob): void {
    const tick = async () => {
      let state: Awaited<ReturnType<ProviderJob['poll']>>;
      try {
        state = await job.poll(operation.providerJob as string);
      } catch (error) {
        // A poll that failed (the provider unreachable for a while) is tried again at the next tick.
        this.logger.warn({ err: error, operation: operation.id }, 'polling an image job failed');
        state = { done: false };
      }
      const overdue = Date.now() - operation.createdAt.getTime() > this.options.maxJobMs;
      if (!state.done && !overdue) {
        setTimeout(() => void tick(), this.options.pollMs).unref();
        return;
      }
      await this.end(tenant, operation, state).catch((error: unknown) =>
        this.logger.error(
          { err: error, operation: operation.id },
          'could not record the end of an image job',
        ),
      );
    };
    setTimeout(() => void tick(), this.options.pollMs).unref();
  }

  /** Records a job's end once: under a lock on the operation, only while it is still PROCESSING. */
  private async end(
    tenant: ResolvedTenant,
    operation: ImageOperationEntity,
    state: Awaited<ReturnType<ProviderJob['poll']>>,
  ): Promise<void> {
    await this.bus.transaction(async (manager) => {
      const claimed: unknown[] = await manager.query(
        "SELECT id FROM image_operations WHERE id = $1 AND tenant_id = $2 AND status = 'PROCESSING' FOR UPDATE SKIP LOCKED",
        [operation.id, tenant.id],
      );
      if (claimed.length === 0) return;
      if (!state.done)
        failedWith(operation, `the provider did not finish within ${this.options.maxJobMs} ms`);
      else if ('error' in state) failedWith(operation, state.error);
      else {
        const folder = operation.input.folder_path as string | undefined;
        operation.resultFileIds = await this.saveAll(tenant, operation, folder, state.output.images ?? []);
        operation.status = 'COMPLETED';
      }
      operation.completedAt = new Date();
      await this.record(manager, tenant, operation);
    });
  }

  /** A style's prompt words and its first reference image (for image-to-image), or 404. */
  async style(
    tenant: ResolvedTenant,
    userId: string,
    id: string,
  ): Promise<{ suffix: string; reference: Buffer | undefined }> {
    const row = await tenant.scope.repo(CustomStyleEntity).findOne({ id });
    if (!row) throw new NotFoundError('Style not found');
    const suffix = `in the style "${row.name}": ${row.description}; colour palette ${row.palette.join(', ')}`;
    const first = row.referenceImages[0];
    const reference = first
      ? await this.source(tenant, userId, first, 'style_id', false).catch(() => undefined)
      : undefined;
    return { suffix, reference };
  }

  /** An operation of the caller (another user's is 404). */
  async get(tenant: ResolvedTenant, userId: string, id: string): Promise<ImageOperationResult> {
    const row = await this.operations(tenant).findOne({ id, userId });
    if (!row) throw new NotFoundError('Image operation not found');
    return present(row, this.options.publicBase);
  }

  async createStyle(
    tenant: ResolvedTenant,
    userId: string,
    input: { name: string; description?: string; reference_images: string[] },
  ): Promise<CustomStyle> {
    const colours = new Map<string, number>();
    for (const reference of input.reference_images) {
      const bytes = await this.source(tenant, userId, reference, 'reference_images', false);
      for (const [rank, hex] of (await paletteOf(bytes)).entries())
        colours.set(hex, (colours.get(hex) ?? 0) + 6 - rank);
    }
    const palette = [...colours]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([hex]) => hex);
    const row = await tenant.scope.repo(CustomStyleEntity).insert({
      id: newId(),
      name: input.name.trim(),
      description:
        input.description?.trim() ||
        `Palette ${palette.join(', ')} from ${input.reference_images.length} reference image(s)`,
      referenceImages: input.reference_images,
      palette,
      createdBy: userId,
      createdAt: new Date(),
    });
    return presentStyle(row);
  }

  async listStyles(tenant: ResolvedTenant): Promise<CustomStyleList> {
    const rows = await tenant.scope.repo(CustomStyleEntity).find({ order: { createdAt: 'DESC' } });
    return { items: rows.map(presentStyle) };
  }

  async getStyle(tenant: ResolvedTenant, id: string): Promise<CustomStyle> {
    const row = await tenant.scope.repo(CustomStyleEntity).findOne({ id });
    if (!row) throw new NotFoundError('Style not found');
    return presentStyle(row);
  }

  /** A new operation, PROCESSING, stored and announced. */
  private begin(
    tenant: ResolvedTenant,
    userId: string,
    tool: ImageTool,
    input: Record<string, unknown>,
  ): Promise<ImageOperationEntity> {
    return this.bus.transaction(async (manager) => {
      const row = await this.operations(tenant, manager).insert({
        id: newId(),
        userId,
        tool,
        status: 'PROCESSING',
        input,
        resultFileIds: [],
        analysis: null,
        errorMessage: null,
        providerJob: null,
        createdAt: new Date(),
        completedAt: null,
      });
      await this.announce(manager, tenant, userId, row);
      return row;
    });
  }

  /** The operation's images as files `<tool>-<id>[-n].<ext>` under `folder`; their ids. */
  private async saveAll(
    tenant: ResolvedTenant,
    operation: ImageOperationEntity,
    folder: string | undefined,
    images: NonNullable<ToolOutput['images']>,
  ): Promise<string[]> {
    const saved: string[] = [];
    for (const [n, image] of images.entries()) {
      const name = `${operation.tool}-${operation.id.slice(-8)}${n ? `-${n + 1}` : ''}.${image.extension}`;
      saved.push(await this.save(tenant, operation.userId, folder ?? DEFAULT_FOLDER, name, image));
    }
    return saved;
  }

  private operations(tenant: ResolvedTenant, manager?: EntityManager) {
    return (manager ? tenant.scope.in(manager) : tenant.scope).repo(ImageOperationEntity);
  }

  private async save(
    tenant: ResolvedTenant,
    userId: string,
    folder: string,
    name: string,
    image: { bytes: Buffer; extension: 'png' | 'svg' },
  ): Promise<string> {
    const id = newId();
    const contentType = image.extension === 'svg' ? 'image/svg+xml' : 'image/png';
    const put = await this.blobs.put(revisionKey(tenant.id, id), image.bytes, { contentType });
    const record = await this.files.register(
      tenant,
      userId,
      {
        id,
        key: put.key,
        size: put.size,
        sha256: put.sha256,
        originalName: name,
        clientType: contentType,
        field: 'file',
      },
      { folder_path: folder },
    );
    return record.id;
  }

  private async finish(tenant: ResolvedTenant, operation: ImageOperationEntity): Promise<void> {
    await this.bus.transaction((manager) => this.record(manager, tenant, operation));
  }

  /** Writes the operation's end state and announces it. */
  private async record(
    manager: EntityManager,
    tenant: ResolvedTenant,
    operation: ImageOperationEntity,
  ): Promise<void> {
    await this.operations(tenant, manager).update(
      { id: operation.id },
      {
        status: operation.status,
        resultFileIds: operation.resultFileIds,
        analysis: operation.analysis,
        errorMessage: operation.errorMessage,
        completedAt: operation.completedAt,
      },
    );
    await this.announce(manager, tenant, operation.userId, operation);
  }

  private async announce(
    manager: EntityManager,
    tenant: ResolvedTenant,
    userId: string,
    row: ImageOperationEntity,
  ) {
    await this.bus.outbox.add<ImageOperationUpdatedData>(manager, {
      type: RoutingKeys.imageOperationUpdated,
      tenantId: tenant.id,
      actor: userId,
      data: { userId, operation: present(row, this.options.publicBase) },
    });
  }
}

/** The operation ends as ERROR with the reason its tool gave. */
function failedWith(operation: ImageOperationEntity, reason: string): void {
  operation.status = 'ERROR';
  operation.errorMessage = `The ${operation.tool} tool failed: ${reason}`;
}

function invalid(field: string, detail: string): ValidationError {
  return new ValidationError(detail, [{ field, message: detail }]);
}
