import {
  ArrayMaxSize,
  IsArray,
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
} from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { NestedList, Nullable } from '../common/schema';
import { PathQuery } from '../shared-files/shared-files.dto';

/** Design reviews, their tasks and review templates (sections 2.11, 3.3, 4.11; DECISIONS.md 5). */

export const REVIEW_STATUSES = ['open', 'in_review', 'completed', 'canceled'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export const TASK_STATUSES = ['open', 'in_progress', 'done', 'canceled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** `?workspace` of the routes on one review or task (writes may name it in the body instead). */
export class WorkspaceRef {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  workspace?: string;
}

export class CreateReviewRequest extends PathQuery {
  /** A member of the workspace, or someone with a pending invitation to it. */
  @IsEmail()
  @MaxLength(254)
  reviewerEmail: string;

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  message?: string;

  @IsOptional()
  @IsISO8601()
  dueAt?: string;

  /** A version of the file under review. */
  @IsOptional()
  @IsUUID()
  versionId?: string;

  /** A review template: its checklist becomes the review's tasks. */
  @IsOptional()
  @IsUUID()
  templateId?: string;
}

export class UpdateReviewRequest extends WorkspaceRef {
  @IsOptional()
  @IsIn(REVIEW_STATUSES)
  status?: ReviewStatus;

  @IsOptional()
  @IsEmail()
  @MaxLength(254)
  reviewerEmail?: string;

  @IsOptional()
  @IsISO8601()
  @Nullable()
  dueAt?: string | null;
}

export class CreateReviewTaskRequest extends WorkspaceRef {
  @IsString()
  @IsNotEmpty()
  @MaxLength(300)
  title: string;

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @IsOptional()
  @IsISO8601()
  dueAt?: string;
}

export class UpdateReviewTaskRequest extends WorkspaceRef {
  @IsIn(TASK_STATUSES)
  status: TaskStatus;
}

export class ReviewTask {
  @IsUUID()
  id: string;

  @IsUUID()
  reviewId: string;

  @IsString()
  title: string;

  @IsString()
  description: string;

  @IsIn(TASK_STATUSES)
  status: TaskStatus;

  @IsISO8601()
  @Nullable()
  dueAt: string | null;

  @IsInt()
  sortIndex: number;

  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  updatedAt: string;
}

export class DesignReview {
  @IsUUID()
  id: string;

  @IsString()
  workspace: string;

  @IsString()
  path: string;

  @IsUUID()
  @Nullable()
  versionId: string | null;

  @IsString()
  reviewerEmail: string;

  /** The reviewer's username once they are a member. */
  @IsString()
  @Nullable()
  reviewer: string | null;

  @IsString()
  message: string;

  @IsISO8601()
  @Nullable()
  dueAt: string | null;

  @IsIn(REVIEW_STATUSES)
  status: ReviewStatus;

  @IsUUID()
  @Nullable()
  templateId: string | null;

  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  updatedAt: string;

  @NestedList(() => ReviewTask)
  tasks: ReviewTask[];
}

export const DesignReviewList = ItemsOf(DesignReview, 'DesignReviewList');
export type DesignReviewList = Items<DesignReview>;

export class CreateReviewTemplateRequest {
  /** Or `?workspace=`; when neither names one, the caller's only workspace where they are manager+. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  message?: string;

  /** Items that become the tasks of a review made from the template. */
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(300, { each: true })
  checklist: string[];
}

export class ReviewTemplate {
  @IsUUID()
  id: string;

  @IsString()
  name: string;

  @IsString()
  message: string;

  @IsString({ each: true })
  checklist: string[];

  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;
}

export const ReviewTemplateList = ItemsOf(ReviewTemplate, 'ReviewTemplateList');
export type ReviewTemplateList = Items<ReviewTemplate>;
