import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { RoutingKeys } from '@hwp/contracts';
import { type BlobStore, type Bus, type JobTimer, type Logger, queryRows, startWorker } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { TranslateInput, TranslateMessage } from './translate-worker';
import type { TranslationRow, TranslationsService } from './translations.service';

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

/** Runs of one job (a worker that stopped counts) before a stalled job ends failed. */
const MAX_ATTEMPTS = 2;

/**
 * A running job's claim has lapsed: its lease ran out, or (a row claimed before leases) the time
 * limit and a minute (`$<seconds>`) have passed since the claim.
 */
const leaseRanOut = (seconds: string) =>
  `coalesce(t.lease_until, t.claimed_at + make_interval(secs => ${seconds})) < now()`;

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
      const rows: (TranslationRow & { workspace: string })[] = await manager.query(
        `SELECT t.*, w.name AS workspace FROM model_translations t JOIN workspaces w ON w.id = t.workspace_id
          WHERE (t.status = 'inprogress' AND ${leaseRanOut('$1')}
                 OR t.status = 'pending' AND t.updated_at < now() - make_interval(secs => $1))
            AND ($2::uuid[] IS NULL OR t.id = ANY($2))
          ORDER BY t.updated_at LIMIT 50
          FOR UPDATE OF t SKIP LOCKED`,
        [staleSeconds, ids ?? null],
      );
      for (const stale of rows) {
        const workspace = { id: stale.workspace_id, name: stale.workspace };
        if (stale.attempts >= MAX_ATTEMPTS) {
          const [failed] = await queryRows<TranslationRow>(
            manager,
            `UPDATE model_translations SET status = 'failed', claimed_by = NULL, lease_until = NULL, finished_at = now(),
                    updated_at = now(), reason = $2 WHERE id = $1 RETURNING *`,
            [stale.id, `The translation did not finish in ${stale.attempts} attempts (its worker stopped)`],
          );
          await this.translations.emit(manager, workspace, failed, 'system', 'failed');
          outcome.failed++;
          continue;
        }
        await manager.query(
          `UPDATE model_translations SET status = 'pending', progress = 0, claimed_by = NULL, claimed_at = NULL,
                  lease_until = NULL, updated_at = now() WHERE id = $1`,
          [stale.id],
        );
        await this.bus.outbox.add(manager, {
          type: RoutingKeys.translationRequested,
          workspace: stale.workspace,
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
    const [claimed] = await queryRows<
      TranslationRow & { blob_key: string; source_size: string; workspace: string }
    >(
      this.dataSource,
      `UPDATE model_translations t SET status = 'inprogress', progress = 1, attempts = attempts + 1,
              claimed_by = $2, claimed_at = now(), updated_at = now(),
              lease_until = now() + make_interval(secs => $4)
         FROM shared_file_versions v, workspaces w
        WHERE t.id = $1 AND v.id = t.version_id AND w.id = t.workspace_id
          AND (t.status = 'pending' OR t.status = 'inprogress' AND ${leaseRanOut('$3')})
        RETURNING t.*, v.blob_key, v.size AS source_size, w.name AS workspace`,
      [id, this.id, staleSeconds, this.options.leaseMs / 1000],
    );
    if (!claimed) {
      this.log.debug({ translationId: id }, 'translation already claimed or finished; skipped');
      return false;
    }
    const workspace = { id: claimed.workspace_id, name: claimed.workspace };
    const update = (sql: string, params: unknown[], stage?: string) =>
      this.dataSource.transaction(async (manager) => {
        const [next] = await queryRows<TranslationRow>(
          manager,
          `UPDATE model_translations SET ${sql}, updated_at = now() WHERE id = $1 RETURNING *`,
          [id, ...params],
        );
        await this.translations.emit(manager, workspace, next, 'system', stage);
        return next;
      });
    // The lease is renewed while the job runs here; it lapses only if this process stops.
    const heartbeat = setInterval(
      () => {
        this.dataSource
          .query(
            `UPDATE model_translations SET lease_until = now() + make_interval(secs => $3)
            WHERE id = $1 AND claimed_by = $2 AND status = 'inprogress'`,
            [id, this.id, this.options.leaseMs / 1000],
          )
          .catch((error: unknown) => this.log.warn({ err: error, translationId: id }, 'lease not renewed'));
      },
      Math.max(100, Math.floor(this.options.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      return await this.runClaimed(id, claimed, update);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async runClaimed(
    id: string,
    claimed: TranslationRow & { blob_key: string; source_size: string; workspace: string },
    update: (sql: string, params: unknown[], stage?: string) => Promise<TranslationRow>,
  ): Promise<boolean> {
    await update('progress = progress', [], 'claimed');
    let source: Uint8Array;
    try {
      source = await this.read(claimed.blob_key, Number(claimed.source_size));
    } catch (error) {
      // The store is unreachable: give the job back and let the bus retry it.
      await this.dataSource.query(
        `UPDATE model_translations SET status = 'pending', progress = 0, claimed_by = NULL, claimed_at = NULL,
                lease_until = NULL WHERE id = $1`,
        [id],
      );
      throw error;
    }
    const outcome = await this.translate(
      {
        data: source,
        format: claimed.format,
        options: {
          ...(claimed.simplify !== null ? { simplify: claimed.simplify } : {}),
          compress: claimed.compress,
        },
        name: claimed.name.slice(claimed.name.indexOf('/') + 1),
      },
      async (stage, progress) => {
        await update('progress = greatest(progress, $2)', [progress], stage);
      },
    );
    if (outcome.type === 'failed') {
      await update(
        `status = 'failed', reason = $2, finished_at = now(), lease_until = NULL`,
        [outcome.reason],
        'failed',
      );
      this.log.info({ translationId: id, reason: outcome.reason }, 'translation failed');
      return true;
    }
    const glb = Buffer.from(outcome.glb.buffer, outcome.glb.byteOffset, outcome.glb.byteLength);
    const key = `translations/${claimed.workspace_id}/${id}.glb`;
    await this.blobs.put(key, glb, { contentType: 'model/gltf-binary' });
    const row = await update(
      `status = 'success', progress = 100, reason = NULL, glb_key = $2, size = $3,
       meshes = $4, vertices = $5, triangles = $6, bounds = $7, finished_at = now(), lease_until = NULL`,
      [key, glb.length, outcome.meshes, outcome.vertices, outcome.triangles, JSON.stringify(outcome.bounds)],
      'done',
    );
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
  private async dropSuperseded(row: TranslationRow): Promise<void> {
    const gone = await queryRows<{ glb_key: string | null }>(
      this.dataSource,
      `DELETE FROM model_translations WHERE workspace_id = $1 AND name = $2 AND version_id <> $3
         AND status IN ('success', 'failed') RETURNING glb_key`,
      [row.workspace_id, row.name, row.version_id],
    );
    for (const { glb_key } of gone) {
      if (glb_key) {
        await this.blobs
          .delete(glb_key)
          .catch((error: unknown) => this.log.warn({ err: error, key: glb_key }, 'old GLB not deleted'));
      }
    }
  }
}
