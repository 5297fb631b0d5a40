import { IsInt, IsISO8601, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';

/** Uploads that lost to another (kept as `_conflict_` copies) and their resolution. */

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
