import {
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { Nullable } from '../common/schema';
import { PathQuery } from '../shared-files/shared-files.dto';
import { TASK_STATUSES, type TaskStatus, WorkspaceRef } from './reviews.dto';

/** Tasks on a file, apart from reviews (section 4.11). */

export class CreateTaskRequest extends PathQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(300)
  title: string;

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  /** A member of the workspace (the task's owner, notified). */
  @IsOptional()
  @IsEmail()
  @MaxLength(254)
  ownerEmail?: string;

  @IsOptional()
  @IsISO8601()
  dueAt?: string;

  /** `open` (default) or another starting status. */
  @IsOptional()
  @IsIn(TASK_STATUSES)
  status?: TaskStatus;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000_000)
  sortIndex?: number;
}

export class UpdateTaskRequest extends WorkspaceRef {
  @IsOptional()
  @IsIn(TASK_STATUSES)
  status?: TaskStatus;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(300)
  title?: string;

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @IsOptional()
  @IsEmail()
  @MaxLength(254)
  @Nullable()
  ownerEmail?: string | null;

  @IsOptional()
  @IsISO8601()
  @Nullable()
  dueAt?: string | null;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000_000)
  sortIndex?: number;
}

export class Task {
  @IsUUID()
  id: string;

  @IsString()
  workspace: string;

  @IsString()
  path: string;

  @IsString()
  title: string;

  @IsString()
  description: string;

  @IsString()
  @Nullable()
  ownerEmail: string | null;

  @IsString()
  @Nullable()
  owner: string | null;

  @IsISO8601()
  @Nullable()
  dueAt: string | null;

  @IsIn(TASK_STATUSES)
  status: TaskStatus;

  @IsInt()
  sortIndex: number;

  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  updatedAt: string;
}

export const TaskList = ItemsOf(Task, 'TaskList');
export type TaskList = Items<Task>;
