import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { REVIEW_STATUSES, type ReviewStatus, TASK_STATUSES, type TaskStatus } from './reviews.dto';

/** A workspace's reviews and tasks: the lists and the counts by status. */

export class WorkspaceQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;
}

export class WorkspaceReviewsQuery extends WorkspaceQuery {
  @IsOptional()
  @IsIn(['all', ...REVIEW_STATUSES])
  status?: 'all' | ReviewStatus;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

export class WorkspaceTasksQuery extends WorkspaceQuery {
  @IsOptional()
  @IsIn(['all', ...TASK_STATUSES])
  status?: 'all' | TaskStatus;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

export class StatusCounts {
  @IsInt()
  open: number;

  @IsInt()
  in_review: number;

  @IsInt()
  in_progress: number;

  @IsInt()
  completed: number;

  @IsInt()
  done: number;

  @IsInt()
  canceled: number;

  @IsInt()
  total: number;

  /** Past their due date and not finished (completed, done or canceled). */
  @IsInt()
  overdue: number;
}

/** `GET /v1/workspace/stats`: reviews and tasks (review tasks included in `reviewTasks`) by status. */
export class WorkspaceStats {
  @IsString()
  workspace: string;

  @ValidateNested()
  @Type(() => StatusCounts)
  reviews: StatusCounts;

  @ValidateNested()
  @Type(() => StatusCounts)
  tasks: StatusCounts;

  @ValidateNested()
  @Type(() => StatusCounts)
  reviewTasks: StatusCounts;
}
