import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { Nullable } from '../common/schema';

/**
 * Shared files of the collaboration host (sections 2.11, 3.1, 3.2, 4.8, 4.10; DECISIONS.md 6): a file
 * is `<workspace>/<username>/<filename>`; its etag is the sha256 of the current version's content.
 */

export const LOCK_TTL_DEFAULT_MS = 10 * 60 * 1000;
export const LOCK_TTL_MIN_MS = 60 * 1000;
/** A lock lasts at most a day (a forgotten lock must not block a file for good). */
export const LOCK_TTL_MAX_MS = 24 * 60 * 60 * 1000;
export const SIGNED_URL_MAX_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const MAX_BATCH_FILES = 20;
/** `GET /v1/file` shows text files up to this size. */
export const TEXT_PREVIEW_MAX_BYTES = 1024 * 1024;
export const BRANCH_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const TIMELINE_TYPES = ['version', 'comment', 'task'] as const;

/** `?workspace&username`: one user's folder. */
export class FolderQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  username: string;
}

export class WorkspaceFilesQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;
}

/** `?workspace&username&filename`: one file (on a branch with `branch`, when branch writes use the column). */
export class FileQuery extends FolderQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  filename: string;

  @IsOptional()
  @Matches(BRANCH_PATTERN, { message: 'branch names are [a-z0-9_-]' })
  branch?: string;
}

/** Form fields of `POST /v1/upload` (query: workspace, username). */
export class UploadForm {
  /** The etag the client last saw; a different current etag is a conflict. */
  @IsOptional()
  @IsString()
  @MaxLength(128)
  baseVersion?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  replace?: 'true' | 'false';

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  message?: string;

  /** A branch of the file (when branch writes use the column, not the filename suffix). */
  @IsOptional()
  @Matches(BRANCH_PATTERN, { message: 'branch names are [a-z0-9_-]' })
  branch?: string;
}

/** `?path=<workspace>/<username>/<filename>`. */
export class PathQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(1200)
  path: string;
}

export class TimelineQuery extends PathQuery {
  /** Comma list of `version`, `comment`, `task`; default all. */
  @IsOptional()
  @Matches(/^(version|comment|task)(,(version|comment|task))*$/, {
    message: 'a comma list of version, comment, task',
  })
  types?: string;
}

export class RevertRequest extends PathQuery {
  @IsUUID()
  versionId: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  message?: string;

  /** Accepted for the wire shape; the signed-in user is the author. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  author?: string;
}

export class BranchQuery extends FolderQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  base: string;
}

export class BranchRequest extends BranchQuery {
  @Matches(BRANCH_PATTERN, { message: 'branch names are [a-z0-9_-], at most 64' })
  branch: string;
}

export class MergeRequest extends FolderQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  filename: string;

  @Matches(BRANCH_PATTERN, { message: 'branch names are [a-z0-9_-]' })
  fromBranch: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  message?: string;

  /** Merge although main moved since the branch point. */
  @IsOptional()
  @IsBoolean()
  force?: boolean;
}

export class CommentRequest extends PathQuery {
  /** Accepted for the wire shape; the signed-in user is the author. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  author?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(10_000)
  body: string;
}

export class LockRequest extends PathQuery {
  /** Accepted for the wire shape; the signed-in user owns the lock. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  owner?: string;

  /** Default 10 minutes, at least 1 minute (400 below), at most a day. */
  @IsOptional()
  @IsInt()
  @Min(LOCK_TTL_MIN_MS)
  @Max(LOCK_TTL_MAX_MS)
  ttlMs?: number;
}

export class UnlockRequest extends PathQuery {
  @IsUUID()
  lockId: string;
}

export class ForceUnlockRequest extends PathQuery {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  author?: string;

  /** Posted as a comment on the file and sent to the lock's owner. */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

export class LockNotifyRequest extends PathQuery {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  from?: string;
}

export class LockAllRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  owner?: string;

  @IsOptional()
  @IsInt()
  @Min(LOCK_TTL_MIN_MS)
  @Max(LOCK_TTL_MAX_MS)
  ttlMs?: number;
}

export class UnlockAllRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;
}

export class ResolveConflictRequest {
  /** The file the conflict is about, as a path. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1200)
  baseName: string;

  /** The version everyone gets: the file's own path or one of its conflict copies. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1200)
  acceptedPath: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  message?: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  author?: string;
}

export class RestoreRequest extends FolderQuery {
  /** The trash item's key (from `GET /v1/trash`). */
  @IsUUID()
  key: string;

  /** Restore under this name (when a live file took the old one). */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  filename?: string;
}

export class SignedUrlQuery {
  /** A `/v1/serve/<workspace>/<username>/<filename>` path. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1500)
  path: string;

  /** Default 15 minutes, at most 7 days. */
  @IsOptional()
  @IsInt()
  @Min(1000)
  @Max(SIGNED_URL_MAX_TTL_MS)
  ttlMs?: number;
}

export class SignedServeQuery {
  @IsString()
  @Matches(/^\d{1,15}$/, { message: 'epoch milliseconds' })
  expires: string;

  @IsString()
  @MaxLength(128)
  sig: string;

  @IsOptional()
  @IsString()
  @MaxLength(32)
  kid?: string;
}

/** A file of the workspace (its current version on main). */
export class SharedFile {
  @IsString()
  workspace: string;

  @IsString()
  username: string;

  @IsString()
  filename: string;

  @IsString()
  path: string;

  @IsString()
  etag: string;

  @IsString()
  sha256: string;

  @IsInt()
  size: number;

  @IsString()
  contentType: string;

  @IsUUID()
  versionId: string;

  @IsISO8601()
  updatedAt: string;

  @IsString()
  updatedBy: string;

  /** Set for a branch file written with the filename suffix (`<stem>@<branch><.ext>`). */
  @IsString()
  @Nullable()
  branchOf: string | null;
}

export const SharedFileList = ItemsOf(SharedFile, 'SharedFileList');
export type SharedFileList = Items<SharedFile>;

/** `201` of an upload (DECISIONS.md 6). */
export class UploadResult {
  @IsString()
  filename: string;

  @IsString()
  etag: string;

  @IsInt()
  size: number;

  @IsString()
  contentType: string;

  @IsString()
  sha256: string;

  @IsUUID()
  versionId: string;

  @IsString()
  @Nullable()
  branch: string | null;
}

export class ConflictCopy {
  @IsString()
  filename: string;

  @IsString()
  etag: string;

  @IsUUID()
  versionId: string;
}

/** One file of `POST /v1/uploads`: its result, or its error. */
export class BatchUploadEntry {
  @IsString()
  filename: string;

  @IsInt()
  status: number;

  @IsOptional()
  @ValidateNested()
  @Type(() => UploadResult)
  result?: UploadResult;

  @IsOptional()
  @IsString()
  code?: string;

  @IsOptional()
  @IsString()
  detail?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ConflictCopy)
  conflict?: ConflictCopy;
}

export const BatchUploadResult = ItemsOf(BatchUploadEntry, 'BatchUploadResult');
export type BatchUploadResult = Items<BatchUploadEntry>;

export class FileVersion {
  @IsUUID()
  versionId: string;

  @IsString()
  path: string;

  @IsInt()
  number: number;

  @IsString()
  etag: string;

  @IsInt()
  size: number;

  @IsString()
  contentType: string;

  @IsString()
  @Nullable()
  message: string | null;

  @IsString()
  author: string;

  @IsISO8601()
  createdAt: string;

  @IsString()
  branch: string;

  /** `upload`, `revert`, `merge`, `resolve`, `branch`. */
  @IsString()
  source: string;

  /** The message of the comment nearest in time to this version, if any. */
  @IsString()
  @Nullable()
  comment: string | null;
}

export const FileVersionList = ItemsOf(FileVersion, 'FileVersionList');
export type FileVersionList = Items<FileVersion>;

export class FileComment {
  @IsUUID()
  id: string;

  @IsString()
  path: string;

  @IsString()
  author: string;

  @IsString()
  body: string;

  /** Members named with `@username` (each got a `mention` event). */
  @IsString({ each: true })
  mentions: string[];

  @IsISO8601()
  createdAt: string;
}

export const FileCommentList = ItemsOf(FileComment, 'FileCommentList');
export type FileCommentList = Items<FileComment>;

export class TimelineEntry {
  @IsIn(TIMELINE_TYPES)
  type: 'version' | 'comment' | 'task';

  @IsString()
  id: string;

  @IsISO8601()
  at: string;

  @IsString()
  author: string;

  /** The version's message, the comment's body or the task's title. */
  @IsString()
  @Nullable()
  text: string | null;
}

export const Timeline = ItemsOf(TimelineEntry, 'Timeline');
export type Timeline = Items<TimelineEntry>;

export class FileLock {
  @IsString()
  path: string;

  @IsUUID()
  lockId: string;

  @IsString()
  owner: string;

  @IsISO8601()
  acquiredAt: string;

  @IsISO8601()
  expiresAt: string;

  @IsInt()
  ttlMs: number;
}

export class UnlockResult {
  @IsBoolean()
  unlocked: boolean;
}

export class LockAllResult {
  /** Files locked (or unlocked) by the call. */
  @IsInt()
  count: number;

  /** Paths another user holds a valid lock on: left as they are. */
  @IsString({ each: true })
  skipped: string[];
}

export class LockNotifyResult {
  @IsBoolean()
  notified: boolean;
}

export class FileConflict {
  @IsUUID()
  id: string;

  /** The file the conflict is about. */
  @IsString()
  baseName: string;

  /** The `_conflict_` copy holding the upload that lost. */
  @IsString()
  conflictPath: string;

  @IsString()
  author: string;

  @IsString()
  etag: string;

  @IsISO8601()
  createdAt: string;
}

export const FileConflictList = ItemsOf(FileConflict, 'FileConflictList');
export type FileConflictList = Items<FileConflict>;

export class ResolveResult {
  @IsString()
  path: string;

  @IsUUID()
  versionId: string;

  @IsString()
  etag: string;

  /** Conflict copies removed (moved to the trash). */
  @IsInt()
  removed: number;
}

export class TrashItem {
  @IsUUID()
  key: string;

  @IsString()
  workspace: string;

  @IsString()
  username: string;

  @IsString()
  filename: string;

  @IsInt()
  size: number;

  @IsISO8601()
  deletedAt: string;

  @IsString()
  deletedBy: string;

  /** When it is purged for good. */
  @IsISO8601()
  purgeAt: string;
}

export const TrashList = ItemsOf(TrashItem, 'TrashList');
export type TrashList = Items<TrashItem>;

export class DeleteResult {
  @IsUUID()
  key: string;

  @IsISO8601()
  purgeAt: string;
}

export class FileBranch {
  /** Section 2.11's name of the branch (the same as `name`). */
  @IsString()
  branch: string;

  @IsString()
  name: string;

  @IsString()
  workspace: string;

  /** The folder (user) of the base file. */
  @IsString()
  username: string;

  @IsString()
  base: string;

  /** The file a branch's writes go to: its own file (suffix writes) or the base (branch column). */
  @IsString()
  filename: string;

  @IsUUID()
  @Nullable()
  headVersionId: string | null;

  /** Main's version when the branch was made (a merge after main moved is a conflict). */
  @IsUUID()
  @Nullable()
  baseVersionId: string | null;

  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;
}

export const FileBranchList = ItemsOf(FileBranch, 'FileBranchList');
export type FileBranchList = Items<FileBranch>;

export class SignedUrl {
  @IsString()
  url: string;

  @IsISO8601()
  expiresAt: string;
}

export class TextPreview {
  @IsString()
  filename: string;

  @IsString()
  contentType: string;

  @IsString()
  etag: string;

  @IsString()
  text: string;
}

export class FileMeta extends SharedFile {
  @ValidateNested()
  @Type(() => FileLock)
  @Nullable()
  lock: FileLock | null;
}
