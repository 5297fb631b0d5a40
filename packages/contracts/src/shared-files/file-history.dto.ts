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
} from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { Nullable } from '../common/schema';
import { PathQuery, TIMELINE_TYPES } from './shared-files.dto';

/** A file's versions, comments and timeline; reverting to a version. */

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
