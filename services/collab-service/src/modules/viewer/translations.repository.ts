import { entityRows, queryRows } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { TranslationEntity } from './translation.entity';

type Row = Record<string, unknown>;

/** `SELECT t.*` rows of model_translations as entities. */
const asTranslations = (manager: EntityManager, rows: Row[]): TranslationEntity[] =>
  rows.map(entityRows(manager.connection, TranslationEntity));

/** Versions that are a file's current one: main's, or the newest of the translation's branch. */
const IS_CURRENT = `(t.branch = 'main' AND f.current_version_id = t.version_id OR t.branch <> 'main' AND t.version_id = (
    SELECT v.id FROM shared_file_versions v WHERE v.file_id = t.file_id AND v.branch = t.branch ORDER BY v.number DESC LIMIT 1))`;

/**
 * The translations of one workspace, as `translate-file`, the status map and the lookup read and
 * write them: single rows through the scope's repository, the rest as SQL naming
 * `workspace_id = scope.id` (an insert that may find the job there, DISTINCT ON, an order by state).
 */
export class TranslationsRepository {
  private readonly translations: WorkspaceScopedRepository<TranslationEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.translations = scope.repo(TranslationEntity);
  }

  private get manager() {
    return this.scope.manager;
  }

  /** Holds the user's requests back until this transaction ends (so the caps count what is there). */
  async serialiseRequestsOf(userId: string): Promise<void> {
    await this.manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`translations:${userId}`]);
  }

  /** Holds, until the transaction ends, the requests for one file version (any user's), after the user's. */
  async serialiseVariantsOf(versionId: string): Promise<void> {
    await this.manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `translation-variants:${versionId}`,
    ]);
  }

  /** The job of a file version and option set, if there is one. */
  variant(versionId: string, optionsKey: string): Promise<TranslationEntity | null> {
    return this.translations.findOne({ versionId, optionsKey });
  }

  /** How many option sets of the version have a job. */
  variantsOf(versionId: string): Promise<number> {
    return this.translations.count({ versionId });
  }

  /** A new job; null when the version has one with these options already (the caller reads that). */
  async insertIfNew(job: {
    id: string;
    fileId: string;
    versionId: string;
    branch: string;
    name: string;
    format: string;
    simplify: number | null;
    compress: boolean;
    optionsKey: string;
    requestedBy: string;
  }): Promise<TranslationEntity | null> {
    const rows = await queryRows<Row>(
      this.manager,
      `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, simplify, compress, options_key, requested_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (version_id, options_key) DO NOTHING RETURNING *`,
      [
        job.id,
        this.scope.id,
        job.fileId,
        job.versionId,
        job.branch,
        job.name,
        job.format,
        job.simplify,
        job.compress,
        job.optionsKey,
        job.requestedBy,
      ],
    );
    return asTranslations(this.manager, rows)[0] ?? null;
  }

  /** Every live file's newest translation of its current version. */
  async newestOfCurrentVersions(): Promise<TranslationEntity[]> {
    const rows: Row[] = await this.manager.query(
      `SELECT DISTINCT ON (t.name) t.* FROM model_translations t
         JOIN shared_files f ON f.id = t.file_id AND f.deleted_at IS NULL
        WHERE t.workspace_id = $1 AND ${IS_CURRENT}
        ORDER BY t.name, t.created_at DESC`,
      [this.scope.id],
    );
    return asTranslations(this.manager, rows);
  }

  /** The version's translation to show: a finished one first, else the newest. */
  async bestOfVersion(versionId: string): Promise<TranslationEntity | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM model_translations WHERE workspace_id = $1 AND version_id = $2
        ORDER BY (status = 'success') DESC, created_at DESC LIMIT 1`,
      [this.scope.id, versionId],
    );
    return asTranslations(this.manager, rows)[0] ?? null;
  }
}

/*
 * Unscoped: jobs taken by id, in whatever workspace holds them. The queue's messages, the lease
 * sweep and the worker name a job, not a workspace (the request that made it passed the role check);
 * a signed GLB URL is its own authorisation; the per-user cap counts a user's jobs everywhere.
 */

/** Unscoped: the user's jobs waiting or running, in every workspace (the per-user cap of translate-file). */
export async function openJobsOfUserAcrossWorkspaces(
  manager: EntityManager,
  userId: string,
): Promise<number> {
  const [{ queued }]: { queued: string }[] = await manager.query(
    `SELECT count(*) AS queued FROM model_translations
      WHERE requested_by = $1 AND status IN ('pending', 'inprogress')`,
    [userId],
  );
  return Number(queued);
}

/** Unscoped: a finished translation by id, for its signed GLB URL (the signature was checked). */
export async function finishedTranslationById(
  manager: EntityManager,
  id: string,
): Promise<TranslationEntity | null> {
  const rows: Row[] = await manager.query(
    `SELECT * FROM model_translations WHERE id = $1 AND status = 'success'`,
    [id],
  );
  return asTranslations(manager, rows)[0] ?? null;
}

/**
 * A running job's claim has lapsed: its lease ran out, or (a row claimed before leases) the time
 * limit and a minute (`$<seconds>`) have passed since the claim.
 */
const leaseRanOut = (seconds: string) =>
  `coalesce(t.lease_until, t.claimed_at + make_interval(secs => ${seconds})) < now()`;

/** A job with the name of its workspace. */
export type JobInWorkspace = { translation: TranslationEntity; workspace: string };

/**
 * Unscoped, for the lease sweep: jobs whose worker stopped (`inprogress`, its claim lapsed) or whose
 * message never came (`pending` for `staleSeconds`), locked, skipping those another sweep holds;
 * `ids` limits it to those jobs. `staleSeconds` also bounds a claim without a lease.
 */
export async function staleJobsForUpdate(
  manager: EntityManager,
  staleSeconds: number,
  ids: string[] | null,
): Promise<JobInWorkspace[]> {
  const rows: Row[] = await manager.query(
    `SELECT t.*, w.name AS workspace FROM model_translations t JOIN workspaces w ON w.id = t.workspace_id
      WHERE (t.status = 'inprogress' AND ${leaseRanOut('$1')}
             OR t.status = 'pending' AND t.updated_at < now() - make_interval(secs => $1))
        AND ($2::uuid[] IS NULL OR t.id = ANY($2))
      ORDER BY t.updated_at LIMIT 50
      FOR UPDATE OF t SKIP LOCKED`,
    [staleSeconds, ids],
  );
  return withWorkspaces(manager, rows);
}

function withWorkspaces(manager: EntityManager, rows: Row[]): JobInWorkspace[] {
  const translations = asTranslations(manager, rows);
  return rows.map((row, i) => ({ translation: translations[i], workspace: row.workspace as string }));
}

/** Unscoped (a job by id): ends it failed with the reason, its claim and lease dropped. */
export async function failJob(
  manager: EntityManager,
  id: string,
  reason: string,
): Promise<TranslationEntity> {
  const rows = await queryRows<Row>(
    manager,
    `UPDATE model_translations SET status = 'failed', claimed_by = NULL, lease_until = NULL, finished_at = now(),
            updated_at = now(), reason = $2 WHERE id = $1 RETURNING *`,
    [id, reason],
  );
  return asTranslations(manager, rows)[0];
}

/**
 * Unscoped (a job by id): back to `pending`, unclaimed. The sweep (`touch`: marked changed now)
 * requeues rows it has locked as stale; a worker (`heldBy`) gives back only a job it still holds,
 * never one another worker claimed after its lease ran out.
 */
export async function requeueJob(
  manager: EntityManager,
  id: string,
  by: { touch: true } | { heldBy: string },
): Promise<void> {
  const held = 'heldBy' in by;
  await manager.query(
    `UPDATE model_translations SET status = 'pending', progress = 0, claimed_by = NULL, claimed_at = NULL,
            lease_until = NULL${held ? '' : ', updated_at = now()'}
      WHERE id = $1${held ? ` AND claimed_by = $2 AND status = 'inprogress'` : ''}`,
    held ? [id, by.heldBy] : [id],
  );
}

/** A claimed job with what running it needs: its source's blob and size, its workspace's name. */
export type ClaimedJob = JobInWorkspace & { blobKey: string; sourceSize: string };

/**
 * Unscoped (a job by id, from the queue): claims it for `workerId` in one atomic UPDATE when it is
 * pending or its claim lapsed (a claim without a lease: after `staleSeconds`), with a lease of
 * `leaseSeconds`; null when another worker has it or it is finished.
 */
export async function claimJob(
  manager: EntityManager,
  id: string,
  workerId: string,
  staleSeconds: number,
  leaseSeconds: number,
): Promise<ClaimedJob | null> {
  const rows = await queryRows<Row>(
    manager,
    `UPDATE model_translations t SET status = 'inprogress', progress = 1, attempts = attempts + 1,
            claimed_by = $2, claimed_at = now(), updated_at = now(),
            lease_until = now() + make_interval(secs => $4)
       FROM shared_file_versions v, workspaces w
      WHERE t.id = $1 AND v.id = t.version_id AND w.id = t.workspace_id
        AND (t.status = 'pending' OR t.status = 'inprogress' AND ${leaseRanOut('$3')})
      RETURNING t.*, v.blob_key, v.size AS source_size, w.name AS workspace`,
    [id, workerId, staleSeconds, leaseSeconds],
  );
  const [row] = rows;
  if (!row) return null;
  return {
    ...withWorkspaces(manager, rows)[0],
    blobKey: row.blob_key as string,
    sourceSize: row.source_size as string,
  };
}

/** Unscoped (a running job by id): its lease runs `leaseSeconds` from now, while `workerId` holds it. */
export async function renewLease(
  manager: EntityManager,
  id: string,
  workerId: string,
  leaseSeconds: number,
): Promise<void> {
  await manager.query(
    `UPDATE model_translations SET lease_until = now() + make_interval(secs => $3)
      WHERE id = $1 AND claimed_by = $2 AND status = 'inprogress'`,
    [id, workerId, leaseSeconds],
  );
}

/** What a running job records as it goes. */
export type JobProgress =
  | { stage: 'claimed' }
  | { progress: number }
  | { failed: string }
  | {
      done: {
        glbKey: string;
        size: number;
        meshes: number;
        vertices: number;
        triangles: number;
        bounds: { min: number[]; max: number[] };
      };
    };

/**
 * Unscoped (a running job by id): records its progress, failure or result while `workerId` holds the
 * claim; the row as it now is, or null when the claim went to another worker (its lease had run out),
 * whose run then decides the job.
 */
export async function recordJob(
  manager: EntityManager,
  id: string,
  workerId: string,
  change: JobProgress,
): Promise<TranslationEntity | null> {
  const [set, params] =
    'stage' in change
      ? ['progress = progress', []]
      : 'progress' in change
        ? ['progress = greatest(progress, $3)', [change.progress]]
        : 'failed' in change
          ? [`status = 'failed', reason = $3, finished_at = now(), lease_until = NULL`, [change.failed]]
          : [
              `status = 'success', progress = 100, reason = NULL, glb_key = $3, size = $4,
               meshes = $5, vertices = $6, triangles = $7, bounds = $8, finished_at = now(), lease_until = NULL`,
              [
                change.done.glbKey,
                change.done.size,
                change.done.meshes,
                change.done.vertices,
                change.done.triangles,
                JSON.stringify(change.done.bounds),
              ],
            ];
  const rows = await queryRows<Row>(
    manager,
    `UPDATE model_translations SET ${set}, updated_at = now()
      WHERE id = $1 AND claimed_by = $2 AND status = 'inprogress' RETURNING *`,
    [id, workerId, ...params],
  );
  return rows.length ? asTranslations(manager, rows)[0] : null;
}

/**
 * Unscoped (after a job by id succeeded): deletes the finished translations of older versions of its
 * name in its workspace, answering their GLBs' keys.
 */
export async function deleteSuperseded(
  manager: EntityManager,
  job: TranslationEntity,
): Promise<(string | null)[]> {
  const gone = await queryRows<{ glb_key: string | null }>(
    manager,
    `DELETE FROM model_translations WHERE workspace_id = $1 AND name = $2 AND version_id <> $3
       AND status IN ('success', 'failed') RETURNING glb_key`,
    [job.workspaceId, job.name, job.versionId],
  );
  return gone.map((row) => row.glb_key);
}
