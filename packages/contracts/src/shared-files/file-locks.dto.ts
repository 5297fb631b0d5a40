import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { Nullable } from '../common/schema';
import { LOCK_TTL_MAX_MS, LOCK_TTL_MIN_MS, PathQuery, SharedFile } from './shared-files.dto';

/** Locks of a file (one user's, for a while) and of a whole workspace. */

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

export class FileMeta extends SharedFile {
  @ValidateNested()
  @Type(() => FileLock)
  @Nullable()
  lock: FileLock | null;
}
