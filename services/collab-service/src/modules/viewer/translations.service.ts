import {
  type ModelLookup,
  type ModelLookupQuery,
  RoutingKeys,
  type SignedServeQuery,
  type TranslateFileRequest,
  type Translation,
  type TranslationStatusEntry,
} from '@hwp/contracts';
import { modelFormatOf } from '@hwp/geometry';
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
import type { TranslationEntity } from './translation.entity';
import {
  finishedTranslationById,
  openJobsOfUserAcrossWorkspaces,
  TranslationsRepository,
} from './translations.repository';

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
      const repo = new TranslationsRepository(access.in(manager));
      // Serialises one user's requests, then one version's (always in that order: no deadlock), so
      // the per-user and per-version caps below count what is really there.
      await repo.serialiseRequestsOf(actor.id);
      await repo.serialiseVariantsOf(version.id);
      if (!(await repo.variant(version.id, optionsKey))) await this.checkCaps(repo, actor, version.id);
      const row = await repo.insertIfNew({
        id: newId(),
        fileId: file.id,
        versionId: version.id,
        branch: target.branch,
        name,
        format,
        simplify,
        compress,
        optionsKey,
        requestedBy: actor.id,
      });
      if (!row) {
        const existing = (await repo.variant(version.id, optionsKey)) as TranslationEntity;
        // Asking again for a job whose worker stopped takes it over now (the sweep would, later).
        if (existing.status === 'inprogress' || existing.status === 'pending') this.stalled(existing.id);
        return { translation: present(access, existing), queued: false };
      }
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
  private async checkCaps(
    repo: TranslationsRepository,
    actor: CollabUserEntity,
    versionId: string,
  ): Promise<void> {
    const variants = await repo.variantsOf(versionId);
    const queued = await openJobsOfUserAcrossWorkspaces(repo.scope.manager, actor.id);
    if (variants >= MAX_VARIANTS_PER_VERSION) {
      throw new ConflictError(
        `This version has ${MAX_VARIANTS_PER_VERSION} translations with other options already; ask for one of those`,
        { field: 'simplify' },
      );
    }
    if (queued >= this.options.queuePerUser) {
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
    row: TranslationEntity,
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
        versionId: row.versionId,
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
    const rows = await new TranslationsRepository(access).newestOfCurrentVersions();
    return rows.map((r) => ({
      name: r.name,
      status: r.status,
      progress: r.progress,
      ...(r.reason ? { reason: r.reason } : {}),
      modelId: r.id,
      versionId: r.versionId,
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
    const row = await new TranslationsRepository(access).bestOfVersion(version.id);
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
    const row = await finishedTranslationById(this.dataSource.manager, id);
    if (!row?.glbKey) throw new NotFoundError('No such model');
    const stem = row.name.slice(row.name.indexOf('/') + 1).replace(/\.[^.]*$/, '');
    await serveBlob(
      this.blobs,
      {
        key: row.glbKey,
        size: Number(row.size),
        // A model's GLB never changes: its id is a strong validator.
        sha256: row.id,
        modified: row.finishedAt ?? row.updatedAt,
        contentType: 'model/gltf-binary',
        filename: `${stem}.glb`,
      },
      req,
      res,
    );
  }
}

export function present(access: { name: string }, r: TranslationEntity): Translation {
  return {
    modelId: r.id,
    workspace: access.name,
    name: r.name,
    versionId: r.versionId,
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
    createdAt: r.createdAt.toISOString(),
    finishedAt: r.finishedAt ? r.finishedAt.toISOString() : null,
  };
}
