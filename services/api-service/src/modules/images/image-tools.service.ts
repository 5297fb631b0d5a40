import type { ImageOperationResult, ImageTool } from '@hwp/contracts';
import { type Bus, type Logger, NotFoundError } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import type { ImageOperationEntity } from './image.entities';
import { DEFAULT_FOLDER, failedWith, type ImageOperationStore, type ToolOutput } from './image-operations';

export interface ImageToolsOptions {
  /** Interval of polling a running prediction, and how long one may run. */
  pollMs: number;
  maxJobMs: number;
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

/**
 * The image tools of section 4.2 that run on this host: every call is stored as an image operation
 * (PROCESSING, then COMPLETED or ERROR, announced as `image.operation.updated.v1`), either run at
 * once or followed as a provider job until it ends.
 */
export class ImageToolsService {
  constructor(
    private readonly bus: Bus,
    private readonly operations: ImageOperationStore,
    private readonly logger: Logger,
    private readonly options: ImageToolsOptions,
  ) {}

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
    const operation = await this.operations.begin(tenant, userId, tool, input);
    let output: ToolOutput;
    try {
      output = await work();
      operation.resultFileIds = await this.operations.saveAll(tenant, operation, folder, output.images ?? []);
      operation.analysis = output.analysis ?? null;
      operation.status = 'COMPLETED';
    } catch (error) {
      this.logger.warn({ err: error, operation: operation.id, tool }, 'image operation failed');
      failedWith(operation, error instanceof Error ? error.message : String(error));
    }
    operation.completedAt = new Date();
    await this.operations.finish(tenant, operation);
    return this.operations.present(operation);
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
    const operation = await this.operations.begin(tenant, userId, tool, {
      ...input,
      folder_path: folder ?? DEFAULT_FOLDER,
    });
    try {
      operation.providerJob = await job.start();
      await this.operations.repo(tenant).update({ id: operation.id }, { providerJob: operation.providerJob });
    } catch (error) {
      failedWith(operation, error instanceof Error ? error.message : String(error));
      operation.completedAt = new Date();
      await this.operations.finish(tenant, operation);
      return this.operations.present(operation);
    }
    this.follow(tenant, operation, job);
    return this.operations.present(operation);
  }

  /** Operations whose provider job was running when this process started: polled again. */
  async resume(manager: EntityManager, jobs: (tool: ImageTool) => ProviderJob | undefined): Promise<number> {
    // Across tenants on purpose: each row is then handled in its own tenant's scope.
    const rows: { id: string; tenant_id: string; user_id: string }[] = await manager.query(
      `SELECT id, tenant_id, user_id FROM image_operations WHERE status = 'PROCESSING' AND provider_job IS NOT NULL`,
    );
    for (const row of rows) {
      const tenant = await this.options.tenantOf(row.tenant_id, row.user_id);
      const operation = tenant ? await this.operations.repo(tenant).findOne({ id: row.id }) : null;
      const job = operation && jobs(operation.tool);
      if (tenant && operation && job) this.follow(tenant, operation, job);
    }
    return rows.length;
  }

  /** An operation of the caller (another user's is 404). */
  async get(tenant: ResolvedTenant, userId: string, id: string): Promise<ImageOperationResult> {
    const row = await this.operations.repo(tenant).findOne({ id, userId });
    if (!row) throw new NotFoundError('Image operation not found');
    return this.operations.present(row);
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
        const images = state.output.images ?? [];
        operation.resultFileIds = await this.operations.saveAll(tenant, operation, folder, images);
        operation.status = 'COMPLETED';
      }
      operation.completedAt = new Date();
      await this.operations.record(manager, tenant, operation);
    });
  }
}
