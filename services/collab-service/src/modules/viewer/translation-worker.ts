import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { RoutingKeys } from '@hwp/contracts';
import { type BlobStore, type Bus, type JobTimer, type Logger, startWorker } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { TranslateInput, TranslateMessage } from './translate-worker';
import type { TranslationEntity } from './translation.entity';
import {
  type ClaimedJob,
  claimJob,
  deleteSuperseded,
  failJob,
  type JobProgress,
  recordJob,
  renewLease,
  requeueJob,
  staleJobsForUpdate,
} from './translations.repository';
import type { TranslationsService } from './translations.service';

export interface TranslationWorkerOptions {
  /** Jobs this process runs at once (the consumer's prefetch). */
  concurrency: number;
  /** Wall-clock limit of one translation; past it the job fails. */
  timeoutMs: number;
  /**
   * Lease of a running job (TRANSLATION_LEASE_MS): renewed every third of it while the job runs, so
   * a job whose process died is taken over once it runs out. The sweep runs as often.
   */
  leaseMs: number;
  /** Heap limit of a translation's worker thread (MB). */
  memoryMb: number;
  /** Times each translation (metrics). */
  time: JobTimer;
}

/** The job's claim went to another worker while this one ran it (its lease had run out). */
class ClaimLost extends Error {
  constructor(id: string) {
    super(`translation ${id} is claimed by another worker`);
    this.name = 'ClaimLost';
  }
}

/** Runs of one job (a worker that stopped counts) before a stalled job ends failed. */
const MAX_ATTEMPTS = 2;

type Outcome =
  | Extract<TranslateMessage, { type: 'done' }>
  | { type: 'failed'; reason: string; transient?: false };

/**
 * Runs translation jobs from the bus (`translation.requested.v1`), each in a worker thread. Several
 * processes may consume the same queue: a job runs only in the process whose claim (one atomic
 * UPDATE from `pending`) succeeds, so a redelivered or duplicated message never runs it twice. The
 * claim is a lease (`lease_until`) its process renews while the job runs: a claim left by a process
 * that died is taken over once its lease has run out (rows from before leases: once the job's time
 * limit has passed since the claim).
 */
export class TranslationWorker {
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** Stops the periodic sweep (shutdown). */
  stopSweeping: () => void = () => {};

  constructor(
    private readonly dataSource: DataSource,
    private readonly blobs: BlobStore,
    private readonly bus: Bus,
    private readonly translations: TranslationsService,
    private readonly log: Logger,
    private readonly options: TranslationWorkerOptions,
  ) {}

  /**
   * Jobs whose worker stopped (a process killed mid-translation: `inprogress` with its lease run out)
   * or whose message never came (`pending` for the time limit and a minute): requeued through the
   * outbox, or `failed` with the reason once they had MAX_ATTEMPTS. Rows are claimed with SKIP LOCKED,
   * so replicas share the sweep. `ids` limits it to those jobs (a request that finds its job stuck).
   */
  async sweepStale(ids?: string[]): Promise<{ requeued: number; failed: number }> {
    const staleSeconds = this.staleSeconds();
    const outcome = { requeued: 0, failed: 0 };
    await this.bus.transaction(async (manager) => {
      const rows = await staleJobsForUpdate(manager, staleSeconds, ids ?? null);
      for (const { translation: stale, workspace: workspaceName } of rows) {
        const workspace = { id: stale.workspaceId, name: workspaceName };
        if (stale.attempts >= MAX_ATTEMPTS) {
          const failed = await failJob(
            manager,
            stale.id,
            `The translation did not finish in ${stale.attempts} attempts (its worker stopped)`,
          );
          await this.translations.emit(manager, workspace, failed, 'system', 'failed');
          outcome.failed++;
          continue;
        }
        await requeueJob(manager, stale.id, { touch: true });
        await this.bus.outbox.add(manager, {
          type: RoutingKeys.translationRequested,
          workspace: workspaceName,
          actor: 'system',
          data: { translationId: stale.id },
        });
        outcome.requeued++;
      }
    });
    if (outcome.requeued || outcome.failed) this.log.warn(outcome, 'stalled translations swept');
    return outcome;
  }

  register(): Promise<void> {
    const timer = setInterval(
      () => {
        this.sweepStale().catch((error: unknown) =>
          this.log.warn({ err: error }, 'translation sweep failed'),
        );
      },
      Math.max(100, Math.min(60_000, Math.floor(this.options.leaseMs / 3))),
    );
    timer.unref();
    this.stopSweeping = () => clearInterval(timer);
    return this.bus.subscribeTo(
      {
        consumer: 'model-translation',
        keys: [RoutingKeys.translationRequested],
        prefetch: this.options.concurrency,
        handlerTimeoutMs: this.options.timeoutMs + 60_000,
      },
      async ({ data }) => {
        await this.options.time('model_translation', () => this.run(data.translationId));
      },
    );
  }

  /** Claims and runs one job; false when another worker has it or it is finished. */
  async run(id: string): Promise<boolean> {
    const staleSeconds = this.staleSeconds();
    const claimed = await claimJob(
      this.dataSource.manager,
      id,
      this.id,
      staleSeconds,
      this.options.leaseMs / 1000,
    );
    if (!claimed) {
      this.log.debug({ translationId: id }, 'translation already claimed or finished; skipped');
      return false;
    }
    const workspace = { id: claimed.translation.workspaceId, name: claimed.workspace };
    const update = (change: JobProgress, stage?: string) =>
      this.dataSource.transaction(async (manager) => {
        const next = await recordJob(manager, id, this.id, change);
        if (!next) throw new ClaimLost(id);
        await this.translations.emit(manager, workspace, next, 'system', stage);
        return next;
      });
    // The lease is renewed while the job runs here; it lapses only if this process stops.
    const heartbeat = setInterval(
      () => {
        renewLease(this.dataSource.manager, id, this.id, this.options.leaseMs / 1000).catch(
          (error: unknown) => this.log.warn({ err: error, translationId: id }, 'lease not renewed'),
        );
      },
      Math.max(100, Math.floor(this.options.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      return await this.runClaimed(id, claimed, update);
    } catch (error) {
      if (!(error instanceof ClaimLost)) throw error;
      // This process stalled past its lease and another worker took the job: that run decides it.
      this.log.warn({ translationId: id }, 'translation claim lost to another worker; its result dropped');
      return false;
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async runClaimed(
    id: string,
    claimed: ClaimedJob,
    update: (change: JobProgress, stage?: string) => Promise<TranslationEntity>,
  ): Promise<boolean> {
    const job = claimed.translation;
    await update({ stage: 'claimed' }, 'claimed');
    let source: Uint8Array;
    try {
      source = await this.read(claimed.blobKey, Number(claimed.sourceSize));
    } catch (error) {
      // The store is unreachable: give the job back (if still ours) and let the bus retry it.
      await requeueJob(this.dataSource.manager, id, { heldBy: this.id });
      throw error;
    }
    const outcome = await this.translate(
      {
        data: source,
        format: job.format,
        options: {
          ...(job.simplify !== null ? { simplify: job.simplify } : {}),
          compress: job.compress,
        },
        name: job.name.slice(job.name.indexOf('/') + 1),
      },
      async (stage, progress) => {
        await update({ progress }, stage);
      },
    );
    if (outcome.type === 'failed') {
      await update({ failed: outcome.reason }, 'failed');
      this.log.info({ translationId: id, reason: outcome.reason }, 'translation failed');
      return true;
    }
    const glb = Buffer.from(outcome.glb.buffer, outcome.glb.byteOffset, outcome.glb.byteLength);
    // A key per attempt: a run that lost its claim never overwrites the GLB of the run that took it
    // over, and removes its own when its result is refused.
    const key = `translations/${job.workspaceId}/${id}.${job.attempts}.glb`;
    await this.blobs.put(key, glb, { contentType: 'model/gltf-binary' });
    const { meshes, vertices, triangles, bounds } = outcome;
    const done = { glbKey: key, size: glb.length, meshes, vertices, triangles, bounds };
    const row = await update({ done }, 'done').catch(async (error: unknown) => {
      await this.blobs
        .delete(key)
        .catch((cause: unknown) => this.log.warn({ err: cause, key }, 'unrecorded GLB not removed'));
      throw error;
    });
    await this.dropSuperseded(row);
    this.log.info({ translationId: id, bytes: glb.length, vertices: outcome.vertices }, 'model translated');
    return true;
  }

  /** Seconds after a claim without a lease (rows from before leases) that it counts as lapsed. */
  private staleSeconds(): number {
    return Math.ceil((this.options.timeoutMs + 60_000) / 1000);
  }

  /** The source's bytes in one buffer of its own (handed to the worker thread without a copy). */
  private async read(key: string, size: number): Promise<Uint8Array> {
    const got = await this.blobs.get(key);
    const data = new Uint8Array(new ArrayBuffer(size));
    let at = 0;
    for await (const chunk of got.body as AsyncIterable<Buffer>) {
      if (at + chunk.length > size) throw new Error(`${key} is longer than its recorded ${size} bytes`);
      data.set(chunk, at);
      at += chunk.length;
    }
    if (at !== size) throw new Error(`${key} has ${at} bytes, not the recorded ${size}`);
    return data;
  }

  /** The conversion in a worker thread: progress as it goes, a time and heap limit, a crash is a failure. */
  private translate(
    input: TranslateInput,
    progress: (stage: string, progress: number) => Promise<void>,
  ): Promise<Outcome> {
    const { data } = input;
    return new Promise((resolve) => {
      const worker = startWorker({
        callerFile: __filename,
        entry: 'translate-worker',
        workerData: { ...input, data } as unknown as Record<string, unknown>,
        transferList: [data.buffer as ArrayBuffer],
        resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb },
      });
      let updates = Promise.resolve();
      let finished = false;
      const finish = (outcome: Outcome) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        worker.removeAllListeners();
        worker.on('error', () => {});
        void worker.terminate();
        // Progress written before the end is written before the end's state.
        void updates.then(() => resolve(outcome));
      };
      const timer = setTimeout(
        () =>
          finish({
            type: 'failed',
            reason: `translation took longer than ${this.options.timeoutMs / 1000} s`,
          }),
        this.options.timeoutMs,
      );
      worker.on('message', (message: TranslateMessage) => {
        if (message.type === 'progress') {
          updates = updates
            .then(() => progress(message.stage, message.progress))
            .catch((error: unknown) => this.log.warn({ err: error }, 'translation progress not recorded'));
        } else finish(message);
      });
      worker.once('error', (error) =>
        finish({ type: 'failed', reason: `the translator stopped: ${error.message}` }),
      );
      worker.once('exit', (code) =>
        finish({ type: 'failed', reason: `the translator exited (code ${code}) before it finished` }),
      );
    });
  }

  /** Older versions' translations of the same name, and their GLBs: a new version invalidated them. */
  private async dropSuperseded(row: TranslationEntity): Promise<void> {
    const gone = await deleteSuperseded(this.dataSource.manager, row);
    for (const glbKey of gone) {
      if (glbKey) {
        await this.blobs
          .delete(glbKey)
          .catch((error: unknown) => this.log.warn({ err: error, key: glbKey }, 'old GLB not deleted'));
      }
    }
  }
}
