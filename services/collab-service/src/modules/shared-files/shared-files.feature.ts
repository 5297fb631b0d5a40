import { createHmac } from 'node:crypto';
import { resolve } from 'node:path';
import { corsOrigins, defineFeature, ownPublicUrl, persistentSecret } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import { fromQuery } from '../workspace-access/workspace-access';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import { WorkspaceScope } from '../workspace-access/workspace-scope';
import { FileBranchesService } from './file-branches.service';
import { FileComments } from './file-comments.service';
import { FileLocksService } from './file-locks.service';
import { servingCors, UrlSigner } from './file-serving';
import { FileTrash } from './file-trash.service';
import { FileWrites } from './file-writes.service';
import { CreateSharedFiles1764200000000 } from './migrations/1764200000000-CreateSharedFiles';
import { fromPath, workspaceLimiter } from './routes/file-routing';
import {
  deleteFile,
  fileMeta,
  listAllFiles,
  listFiles,
  listTrash,
  restoreFile,
  serve,
  serveSigned,
  signedUrl,
  textPreview,
  uploadFile,
  uploadFiles,
} from './routes/files.routes';
import {
  createBranch,
  currentLock,
  deleteBranch,
  forceUnlock,
  listBranches,
  listComments,
  listConflicts,
  listVersions,
  lock,
  lockAll,
  merge,
  postComment,
  requestLock,
  resolveConflict,
  revert,
  timeline,
  unlock,
  unlockAll,
} from './routes/history.routes';
import { sharedFileEntities } from './shared-file.entity';
import { SharedFilesService } from './shared-files.service';

export interface SharedFilesExports {
  files: SharedFilesService;
  locks: FileLocksService;
  /** Signs URLs that work without a session (the viewer's GLBs use it too). */
  signer: UrlSigner;
}

/** The signing keys: SIGNED_URL_KEYS, else one derived from the session secret (replicas agree). */
function signingKeys(config: CollabConfig, service: string): [string, string][] {
  if (config.SIGNED_URL_KEYS) {
    return config.SIGNED_URL_KEYS.split(',').map((pair) => pair.trim().split(':') as [string, string]);
  }
  const session =
    config.SESSION_SECRET ?? persistentSecret(resolve(config.DATA_DIR, service), 'session-secret.key');
  return [['s0', createHmac('sha256', session).update('hwp signed urls').digest('base64url')]];
}

/**
 * Shared files (sections 4.8 and 4.10): uploads with optimistic concurrency and conflict copies,
 * versions, the trash, locks, comments with mentions, conflicts, branches and merges, and serving
 * with Range support and signed URLs.
 */
export const sharedFilesFeature = defineFeature<
  CollabConfig,
  SharedFilesExports,
  { events: EventsModule; 'workspace-access': WorkspaceAccessExports }
>({
  name: 'shared-files',
  entities: sharedFileEntities,
  migrations: [CreateSharedFiles1764200000000],
  build: (deps, { events, 'workspace-access': access }) => {
    const { config, dataSource, bus, logger, blobs } = deps;
    const files = new SharedFilesService(dataSource, blobs, events.events, {
      trashRetentionDays: config.TRASH_RETENTION_DAYS,
    });
    events.events.onChange((workspaceId) => files.changed(workspaceId));
    const comments = new FileComments(dataSource, events.events, bus);
    const locks = new FileLocksService(dataSource, events.events, comments);
    const writes = new FileWrites(dataSource, files, events.events);
    const trash = new FileTrash(dataSource, files, events.events);
    const branches = new FileBranchesService(dataSource, files, events.events, config.BRANCH_SUFFIX_WRITES);
    const signer = new UrlSigner(signingKeys(config, deps.service));
    const maxBytes = config.MAX_UPLOAD_MB * 1024 * 1024;
    const limiterDeps = { dataSource, logger };
    const uploadLimit = workspaceLimiter(
      limiterDeps,
      'uploads',
      config.UPLOADS_PER_MINUTE,
      fromQuery('workspace'),
      'Too many uploads to this workspace; try again in a minute',
    );
    const commentLimit = workspaceLimiter(
      limiterDeps,
      'comments',
      config.COMMENTS_PER_MINUTE,
      fromPath(),
      'Too many comments; try again in a minute',
    );
    const requestLimit = workspaceLimiter(
      limiterDeps,
      'lock-requests',
      config.LOCK_REQUESTS_PER_MINUTE,
      fromPath(),
      'Too many lock requests; try again in a minute',
    );
    const serveCors = servingCors(corsOrigins(config));
    // Unscoped by design: a signed URL carries no session, so no role check scopes it; its valid
    // signature names the workspace, looked up here by name (read-only, as a viewer).
    const scopeOf = async (name: string) => {
      const rows: { id: string; name: string }[] = await dataSource.query(
        'SELECT id, name FROM workspaces WHERE name = $1',
        [name],
      );
      return rows[0] ? new WorkspaceScope(dataSource.manager, { ...rows[0], role: 'viewer' }) : null;
    };
    return {
      routes: access.routes([
        uploadFile(writes, maxBytes, uploadLimit),
        uploadFiles(writes, maxBytes, uploadLimit),
        listFiles(files),
        listAllFiles(files),
        textPreview(files),
        fileMeta(files),
        deleteFile(trash),
        ...serve(files, serveCors),
        signedUrl(signer, ownPublicUrl(config)),
        ...serveSigned(files, signer, serveCors, scopeOf),
        listTrash(trash),
        restoreFile(trash),
        listVersions(files),
        timeline(files),
        revert(writes),
        listBranches(branches),
        createBranch(branches),
        deleteBranch(branches),
        merge(branches),
        listComments(comments),
        postComment(comments, commentLimit),
        currentLock(locks),
        lock(locks),
        unlock(locks),
        forceUnlock(locks),
        requestLock(locks, requestLimit),
        lockAll(locks),
        unlockAll(locks),
        listConflicts(branches),
        resolveConflict(branches),
      ]),
      exports: { files, locks, signer },
    };
  },
});
