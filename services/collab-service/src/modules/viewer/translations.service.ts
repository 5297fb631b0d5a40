import {
  type ModelLookup,
  type ModelLookupQuery,
  RoutingKeys,
  type SignedServeQuery,
  type TranslateFileRequest,
  type Translation,
  type TranslationStatusEntry,
} from '@hwp/contracts';
import { type ModelFormat, modelFormatOf } from '@hwp/geometry';
import {
  AppError,
  type BlobStore,
  type Bus,
  ConflictError,
  currentContext,
  NotFoundError,
  newId,
} from '@hwp/platform';
import type { Request, Response } from 'express';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { FileEvents } from '../shared-files/file-guards';
import { branchFilename, type FilePath } from '../shared-files/file-paths';
import { serveBlob, type UrlSigner } from '../shared-files/file-serving';
import type { SharedFilesService } from '../shared-files/shared-files.service';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';

export interface TranslationRow {
  id: string;
  workspace_id: string;
  file_id: string;
  version_id: string;
  branch: string;
  name: string;
  format: ModelFormat;
  simplify: number | null;
  compress: boolean;
  status: Translation['status'];
  progress: number;
  reason: string | null;
  attempts: number;
  glb_key: string | null;
  size: string | null;
  meshes: number | null;
  vertices: string | null;
  triangles: string | null;
  bounds: { min: number[]; max: number[] } | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export interface TranslationsOptions {
  /** Largest source file translated (bytes); bigger ones answer 413. */
  maxBytes: number;
  /** Branch files carry a `@branch` suffix (phase 1) instead of branch versions. */
  branchSuffixWrites: boolean;
  /** A user's translations pending or running at once (TRANSLATION_QUEUE_PER_USER). */
  queuePerUser: number;
  /** Where clients reach this host (PUBLIC_COLLAB_URL): the base of signed GLB URLs. */
  publicBase: string;
}

/** The path of a model's GLB that its signed URL covers. */
export const glbPath = (id: string) => `/api/viewer/models/${id}/glb`;

/** Versions that are a file's current one: main's, or the newest of the translation's branch. */
const IS_CURRENT = `(t.branch = 'main' AND f.current_version_id = t.version_id OR t.branch <> 'main' AND t.version_id = (
    SELECT v.id FROM shared_file_versions v WHERE v.file_id = t.file_id AND v.branch = t.branch ORDER BY v.number DESC LIMIT 1))`;

/** Option sets (simplify, compress) one file version may be translated with. */
export const MAX_VARIANTS_PER_VERSION = 8;
/**
 * Model translation, shaped like a model-derivative service: `translate-file` records a job per file
 * version and option set (asking again answers the same job) and queues it on the bus; the worker
 * (translation-worker.ts) claims and runs it. The status map and the lookup see only translations of
 * a file's current version: a new version invalidates the old translation.
 */
export class TranslationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly blobs: BlobStore,
    private readonly files: SharedFilesService,
    private readonly events: FileEvents,
    private readonly bus: Bus,
    private readonly signer: UrlSigner,
    private readonly options: TranslationsOptions,
  ) {}

  /** The file a request names, as stored: a branch's suffix file in phase 1, else the file and its branch. */
  /** The file a request names: `<username>/<filename>`, or a bare name in the caller's own folder. */
  private target(access: WorkspaceScope, name: string, branch: string | undefined, caller: string) {
    const slash = name.indexOf('/');
    const username = slash < 0 ? caller : name.slice(0, slash);
    const filename = name.slice(slash + 1);
    if (branch && branch !== 'main' && this.options.branchSuffixWrites) {
      return {
        path: { workspace: access.name, username, filename: branchFilename(filename, branch) } as FilePath,
        branch: 'main',
      };
    }
    return { path: { workspace: access.name, username, filename } as FilePath, branch: branch ?? 'main' };
  }

  private nameOf(target: { path: FilePath; branch: string }): string {
    const filename =
      target.branch === 'main' ? target.path.filename : branchFilename(target.path.filename, target.branch);
    return `${target.path.username}/${filename}`;
  }

  async request(
    actor: CollabUserEntity,
    access: WorkspaceScope,
    request: TranslateFileRequest,
  ): Promise<{ translation: Translation; queued: boolean }> {
    const target = this.target(access, request.filename, request.branch, actor.username);
    const format = modelFormatOf(target.path.filename);
    if (!format) {
      throw new AppError(
        'unsupported_media_type',
        `${target.path.filename} is not a model the viewer translates (STL, OBJ, glTF/GLB, STEP, IGES)`,
      );
    }
    const { file, version } = await this.files.headOf(access, target.path, target.branch);
    if (Number(version.size) > this.options.maxBytes) {
      throw new AppError(
        'payload_too_large',
        `The viewer translates files up to ${Math.floor(this.options.maxBytes / 1048576)} MB; this one has ${version.size} bytes`,
      );
    }
    const name = this.nameOf(target);
    const simplify = request.simplify ?? null;
    const compress = request.compress ?? false;
    const optionsKey = `${simplify ?? '-'}|${compress ? 'c' : '-'}`;
    return this.dataSource.transaction(async (manager) => {
      // Serialises one user's requests, so the caps below count what is really there.
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`translations:${actor.id}`]);
      const [existingRow]: TranslationRow[] = await manager.query(
        'SELECT * FROM model_translations WHERE version_id = $1 AND options_key = $2',
        [version.id, optionsKey],
      );
      if (!existingRow) await this.checkCaps(manager, actor, version.id);
      const inserted: TranslationRow[] = await manager.query(
        `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, simplify, compress, options_key, requested_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (version_id, options_key) DO NOTHING RETURNING *`,
        [
          newId(),
          access.id,
          file.id,
          version.id,
          target.branch,
          name,
          format,
          simplify,
          compress,
          optionsKey,
          actor.id,
        ],
      );
      if (inserted.length === 0) {
        const [existing]: TranslationRow[] = await manager.query(
          'SELECT * FROM model_translations WHERE version_id = $1 AND options_key = $2',
          [version.id, optionsKey],
        );
        // Asking again for a job whose worker stopped takes it over now (the sweep would, later).
        if (existing.status === 'inprogress' || existing.status === 'pending') this.stalled(existing.id);
        return { translation: present(access, existing), queued: false };
      }
      const [row] = inserted;
      await this.bus.outbox.add(manager, {
        type: RoutingKeys.translationRequested,
        workspace: access.name,
        actor: actor.id,
        correlationId: currentContext()?.requestId,
        data: { translationId: row.id },
      });
      await this.emit(manager, access.ref, row, actor);
      return { translation: present(access, row), queued: true };
    });
  }

  /** Told of a job asked for again while unfinished: the worker requeues it if it has stalled. */
  onStalled: (id: string) => void = () => {};

  private stalled(id: string): void {
    setImmediate(() => this.onStalled(id));
  }

  /**
   * The bounds on translation work a user can ask for (finding: 150 distinct `simplify` values of one
   * file queued at once kept another member's small job waiting 92 s): at most
   * MAX_VARIANTS_PER_VERSION option sets of one file version (409), and at most
   * TRANSLATION_QUEUE_PER_USER of the user's jobs pending or running (429 with Retry-After).
   */
  private async checkCaps(manager: EntityManager, actor: CollabUserEntity, versionId: string): Promise<void> {
    const [{ variants, queued }]: { variants: string; queued: string }[] = await manager.query(
      `SELECT (SELECT count(*) FROM model_translations WHERE version_id = $1) AS variants,
              (SELECT count(*) FROM model_translations
                WHERE requested_by = $2 AND status IN ('pending', 'inprogress')) AS queued`,
      [versionId, actor.id],
    );
    if (Number(variants) >= MAX_VARIANTS_PER_VERSION) {
      throw new ConflictError(
        `This version has ${MAX_VARIANTS_PER_VERSION} translations with other options already; ask for one of those`,
        { field: 'simplify' },
      );
    }
    if (Number(queued) >= this.options.queuePerUser) {
      throw new AppError(
        'rate_limited',
        `At most ${this.options.queuePerUser} of your translations wait or run at once; retry when one has finished`,
        { headers: { 'Retry-After': '30' } },
      );
    }
  }

  /** A `translation` event of a job's state. */
  async emit(
    manager: EntityManager,
    workspace: { id: string; name: string },
    row: TranslationRow,
    actor: CollabUserEntity | 'system' = 'system',
    stage?: string,
  ): Promise<void> {
    const [username] = row.name.split('/', 1);
    await this.events.emit(
      manager,
      workspace,
      'translation',
      {
        modelId: row.id,
        name: row.name,
        versionId: row.version_id,
        status: row.status,
        progress: row.progress,
        ...(stage ? { stage } : {}),
        ...(row.reason ? { reason: row.reason } : {}),
      },
      { actor, path: `${workspace.name}/${username}/${row.name.slice(username.length + 1)}` },
    );
  }

  /** Every file's newest translation of its current version. */
  async statusMap(access: WorkspaceScope): Promise<TranslationStatusEntry[]> {
    const rows: TranslationRow[] = await this.dataSource.query(
      `SELECT DISTINCT ON (t.name) t.* FROM model_translations t
         JOIN shared_files f ON f.id = t.file_id AND f.deleted_at IS NULL
        WHERE t.workspace_id = $1 AND ${IS_CURRENT}
        ORDER BY t.name, t.created_at DESC`,
      [access.id],
    );
    return rows.map((r) => ({
      name: r.name,
      status: r.status,
      progress: r.progress,
      ...(r.reason ? { reason: r.reason } : {}),
      modelId: r.id,
      versionId: r.version_id,
    }));
  }

  /** The translation of a file's current version (a finished one first), with a signed GLB URL once done. */
  async lookup(
    access: WorkspaceScope,
    caller: CollabUserEntity,
    query: ModelLookupQuery,
  ): Promise<ModelLookup> {
    const target = this.target(access, query.filename, query.branch, caller.username);
    const { version } = await this.files.headOf(access, target.path, target.branch);
    const [row]: TranslationRow[] = await this.dataSource.query(
      `SELECT * FROM model_translations WHERE workspace_id = $1 AND version_id = $2
        ORDER BY (status = 'success') DESC, created_at DESC LIMIT 1`,
      [access.id, version.id],
    );
    if (!row) {
      throw new NotFoundError(
        `${this.nameOf(target)} has no translation of its current version; POST /api/viewer/translate-file`,
      );
    }
    if (row.status !== 'success') return { ...present(access, row), url: null, expiresAt: null };
    const signed = this.signer.signPath(glbPath(row.id), query.ttlMs, this.options.publicBase);
    return { ...present(access, row), url: signed.url, expiresAt: signed.expiresAt };
  }

  /** The GLB of a finished translation, through its signed URL (the signature first: 403, expiry 410). */
  async serveGlb(id: string, query: SignedServeQuery, req: Request, res: Response): Promise<void> {
    this.signer.verifyPath(glbPath(id), query.expires, query.sig, query.kid);
    const [row]: TranslationRow[] = await this.dataSource.query(
      `SELECT * FROM model_translations WHERE id = $1 AND status = 'success'`,
      [id],
    );
    if (!row?.glb_key) throw new NotFoundError('No such model');
    const stem = row.name.slice(row.name.indexOf('/') + 1).replace(/\.[^.]*$/, '');
    await serveBlob(
      this.blobs,
      {
        key: row.glb_key,
        size: Number(row.size),
        // A model's GLB never changes: its id is a strong validator.
        sha256: row.id,
        modified: row.finished_at ?? row.updated_at,
        contentType: 'model/gltf-binary',
        filename: `${stem}.glb`,
      },
      req,
      res,
    );
  }
}

export function present(access: { name: string }, r: TranslationRow): Translation {
  return {
    modelId: r.id,
    workspace: access.name,
    name: r.name,
    versionId: r.version_id,
    status: r.status,
    progress: r.progress,
    reason: r.reason,
    format: r.format,
    simplify: r.simplify,
    compress: r.compress,
    meshes: r.meshes,
    vertices: r.vertices === null ? null : Number(r.vertices),
    triangles: r.triangles === null ? null : Number(r.triangles),
    bounds: r.bounds,
    size: r.size === null ? null : Number(r.size),
    createdAt: r.created_at.toISOString(),
    finishedAt: r.finished_at ? r.finished_at.toISOString() : null,
  };
}
