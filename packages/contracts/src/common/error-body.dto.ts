import { Type } from 'class-transformer';
import { IsIn, IsISO8601, IsOptional, IsString, ValidateNested } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { ANNOTATION_STATUSES } from '../files/annotations.dto';
import { PART_LIFECYCLES, PART_VERSION_STATUSES } from '../parts/part-constants';
import { REVIEW_STATUSES, TASK_STATUSES } from '../reviews/reviews.dto';
import { ConflictCopy } from '../shared-files/shared-files.dto';
import { ERROR_CODES, type ErrorCode } from './errors';
import { NestedList } from './schema';

/** Schema class of one field problem (for the OpenAPI documents). */
export class FieldErrorDto {
  @IsString()
  field: string;

  @IsString()
  message: string;
}

/**
 * Schema class of the error body (DECISIONS.md section 0): `detail`, `code`, `path`, `timestamp`,
 * `errors` for validation, and the context fields some failures add (listed here, all optional).
 */
@JSONSchema({
  description:
    'The error body of every failure. Beside `errors` (validation), some failures add context fields, ' +
    'listed below; clients ignore fields they do not know.',
})
export class ErrorBodyDto {
  @IsString()
  detail: string;

  @IsIn(ERROR_CODES as unknown as string[])
  code: ErrorCode;

  @IsString()
  path: string;

  @IsISO8601()
  timestamp: string;

  @IsOptional()
  @NestedList(() => FieldErrorDto)
  errors?: FieldErrorDto[];

  /** 409: the input field whose value is taken (a slug, workspace name, part number, revision, email). */
  @IsOptional()
  @IsString()
  field?: string;

  /** 409/410 of accepting an invitation: why it cannot be accepted. */
  @IsOptional()
  @IsIn(['accepted', 'expired', 'revoked'])
  reason?: 'accepted' | 'expired' | 'revoked';

  /** 409 of a part version, annotation, review or task move: the status it is in. */
  @IsOptional()
  @IsIn([
    ...new Set([...PART_VERSION_STATUSES, ...ANNOTATION_STATUSES, ...REVIEW_STATUSES, ...TASK_STATUSES]),
  ])
  status?: string;

  /** 409 of a lifecycle move: the part's lifecycle and the moves allowed from it. */
  @IsOptional()
  @IsIn(PART_LIFECYCLES)
  lifecycle?: string;

  /** ... and of an annotation, review or task move: the statuses allowed from it. */
  @IsOptional()
  @IsIn([...new Set([...PART_LIFECYCLES, ...ANNOTATION_STATUSES, ...REVIEW_STATUSES, ...TASK_STATUSES])], {
    each: true,
  })
  allowed?: string[];

  /** 409 of an upload whose name is taken in the folder: the file (when the caller may see it). */
  @IsOptional()
  @IsString()
  file_id?: string;

  /** 409 of replaying a dead letter: when it was replayed. */
  @IsOptional()
  @IsISO8601()
  replayedAt?: string;

  /** 409 of the dead-letter routes on RabbitMQ: the broker queues that hold the dead letters. */
  @IsOptional()
  @IsString({ each: true })
  deadLetterQueues?: string[];

  /** 409 of a BOM change that would make an assembly contain itself: the part numbers around the cycle. */
  @IsOptional()
  @IsString({ each: true })
  cycle?: string[];

  /** 404 or 409 about one line of a BOM: the line. */
  @IsOptional()
  @IsString()
  itemId?: string;

  /** 409 `version_conflict` of an upload: the file's current etag. */
  @IsOptional()
  @IsString()
  currentEtag?: string;

  /** ... and the `_conflict_` copy the upload was kept as. */
  @IsOptional()
  @ValidateNested()
  @Type(() => ConflictCopy)
  conflict?: ConflictCopy;

  /** 423 of a locked path: who holds the lock and until when. */
  @IsOptional()
  @IsString()
  lockedBy?: string;

  @IsOptional()
  @IsISO8601()
  lockedUntil?: string;
}
