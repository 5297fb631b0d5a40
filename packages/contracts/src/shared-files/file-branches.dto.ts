import {
  IsBoolean,
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
import { BRANCH_PATTERN, FolderQuery } from './shared-files.dto';

/** Branches of a file, and merging one back into main. */

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
