import {
  type ImageOperationResult,
  type ImageOperationUpdatedData,
  type ImageTool,
  RoutingKeys,
} from '@hwp/contracts';
import { type BlobStore, type Bus, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import { revisionKey } from '../files/blob-upload';
import type { FilesService } from '../files/files.service';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import { ImageOperationEntity } from './image.entities';

/** What a tool produced: images to save as files, or an analysis text. */
export interface ToolOutput {
  images?: { bytes: Buffer; extension: 'png' | 'svg' }[];
  analysis?: string;
}

export const DEFAULT_FOLDER = '/generated';

/** The operation ends as ERROR with the reason its tool gave. */
export function failedWith(operation: ImageOperationEntity, reason: string): void {
  operation.status = 'ERROR';
  operation.errorMessage = `The ${operation.tool} tool failed: ${reason}`;
}

/**
 * The stored image operations: each is written PROCESSING, then its end state, and every write is
 * announced as `image.operation.updated.v1` in the same transaction. Results are saved as files of
 * the tenant under `folder_path`.
 */
export class ImageOperationStore {
  /**
   * `publicBase` is where clients reach this host (PUBLIC_API_URL): `generated_images` are absolute
   * URLs under it. Unset (the embedded default), they stay paths on whichever host answered.
   */
  constructor(
    private readonly bus: Bus,
    private readonly blobs: BlobStore,
    private readonly files: FilesService,
    private readonly publicBase?: string,
  ) {}

  present(row: ImageOperationEntity): ImageOperationResult {
    return {
      id: row.id,
      tool: row.tool,
      status: row.status,
      generated_images: row.resultFileIds.map((id) => `${this.publicBase ?? ''}/files/${id}/download`),
      analysis: row.analysis,
      error_message: row.errorMessage,
      created_at: row.createdAt.toISOString(),
      completed_at: row.completedAt?.toISOString() ?? null,
    };
  }

  repo(tenant: ResolvedTenant, manager?: EntityManager) {
    return (manager ? tenant.scope.in(manager) : tenant.scope).repo(ImageOperationEntity);
  }

  /** A new operation, PROCESSING, stored and announced. */
  begin(
    tenant: ResolvedTenant,
    userId: string,
    tool: ImageTool,
    input: Record<string, unknown>,
  ): Promise<ImageOperationEntity> {
    return this.bus.transaction(async (manager) => {
      const row = await this.repo(tenant, manager).insert({
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
  async saveAll(
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

  async finish(tenant: ResolvedTenant, operation: ImageOperationEntity): Promise<void> {
    await this.bus.transaction((manager) => this.record(manager, tenant, operation));
  }

  /** Writes the operation's end state and announces it. */
  async record(
    manager: EntityManager,
    tenant: ResolvedTenant,
    operation: ImageOperationEntity,
  ): Promise<void> {
    await this.repo(tenant, manager).update(
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
      data: { userId, operation: this.present(row) },
    });
  }
}
