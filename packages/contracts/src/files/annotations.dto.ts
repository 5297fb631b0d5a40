import { Type } from 'class-transformer';
import {
  IsArray,
  IsDefined,
  IsIn,
  IsISO8601,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { type Page, PageOf } from '../common/paging';
import { Nullable } from '../common/schema';

/** Annotation statuses (section 3.3) and their moves (DECISIONS.md section 5): open <-> in-progress -> resolved -> open. */
export const ANNOTATION_STATUSES = ['open', 'in-progress', 'resolved'] as const;
export type AnnotationStatus = (typeof ANNOTATION_STATUSES)[number];

export const ANNOTATION_MOVES: Record<AnnotationStatus, readonly AnnotationStatus[]> = {
  open: ['in-progress'],
  'in-progress': ['open', 'resolved'],
  resolved: ['open'],
};

export const ANNOTATION_TARGET_TYPES = ['point', 'area', 'component'] as const;
export type AnnotationTargetType = (typeof ANNOTATION_TARGET_TYPES)[number];

export class AnnotationPosition {
  @IsNumber({ allowNaN: false, allowInfinity: false })
  x: number;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  y: number;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  z: number;
}

export class AnnotationTarget {
  @IsIn(ANNOTATION_TARGET_TYPES)
  type: AnnotationTargetType;

  /** Required when `type` is `component`. */
  @ValidateIf((target: AnnotationTarget) => target.type === 'component' || target.component_id !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  component_id?: string;
}

/** `POST /files/{file_id}/annotations`. */
export class CreateAnnotationRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(10_000)
  text: string;

  @IsDefined()
  @ValidateNested()
  @Type(() => AnnotationPosition)
  position: AnnotationPosition;

  @IsOptional()
  @ValidateNested()
  @Type(() => AnnotationTarget)
  target?: AnnotationTarget;

  /** `#rgb` or `#rrggbb`; default `#ff3b30`. */
  @IsOptional()
  @Matches(/^#(?:[0-9a-fA-F]{3}){1,2}$/, { message: 'color must be a hex color like #ff8800' })
  color?: string;

  /** The status it starts in (section 2.5 lists it among the fields); default `open`. */
  @IsOptional()
  @IsIn(ANNOTATION_STATUSES)
  status?: AnnotationStatus;
}

/** `POST /files/{file_id}/annotations/{annotation_id}/replies`. */
export class CreateReplyRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(10_000)
  text: string;
}

/** `PATCH /files/{file_id}/annotations/{annotation_id}`: a status move. */
export class UpdateAnnotationRequest {
  @IsIn(ANNOTATION_STATUSES)
  status: AnnotationStatus;
}

export class AnnotationReply {
  @IsUUID()
  id: string;

  @IsUUID()
  user_id: string;

  @IsISO8601()
  created_at: string;

  @IsString()
  text: string;
}

/** An annotation (section 2.5). */
export class Annotation {
  @IsUUID()
  id: string;

  @IsUUID()
  file_id: string;

  @IsUUID()
  user_id: string;

  @IsISO8601()
  created_at: string;

  @IsString()
  text: string;

  @ValidateNested()
  @Type(() => AnnotationPosition)
  position: AnnotationPosition;

  @ValidateNested()
  @Type(() => AnnotationTarget)
  target: AnnotationTarget;

  @IsString()
  color: string;

  @IsIn(ANNOTATION_STATUSES)
  status: AnnotationStatus;

  /** The revision the annotation was made on. */
  @IsUUID()
  @Nullable()
  revision_id: string | null;

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => AnnotationReply)
  replies: AnnotationReply[];
}

export const AnnotationList = PageOf(Annotation, 'AnnotationList');
export type AnnotationList = Page<Annotation>;
