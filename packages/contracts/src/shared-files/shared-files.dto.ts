import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
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
