import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { Nullable } from '../common/schema';
import { BRANCH_PATTERN } from '../shared-files/shared-files.dto';

/** Model translation for the web viewer (section 4.9), shaped like a model-derivative service. */

export const TRANSLATION_STATUSES = ['pending', 'inprogress', 'success', 'failed'] as const;
export type TranslationStatus = (typeof TRANSLATION_STATUSES)[number];

/**
 * A file of the workspace by name: `<username>/<filename>` (the path inside the workspace), or a bare
 * `<filename>` in the caller's own folder (section 4.9 names the field `filename`).
 */
const MODEL_NAME = /^(?:[^/\0]{1,255}\/)?[^/\0]{1,255}$/;

export class TranslateFileRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  /**
   * `<username>/<filename>`: the folder and the file, as in `/v1/serve/<workspace>/<username>/<filename>`;
   * a bare file name means the caller's own folder.
   */
  @IsString()
  @Matches(MODEL_NAME, { message: 'filename is <filename> or <username>/<filename>' })
  filename: string;

  /** A branch's head (with branch versions; with branch suffix files, name the `@branch` file instead). */
  @IsOptional()
  @Matches(BRANCH_PATTERN, { message: 'branch names are [a-z0-9_-]' })
  branch?: string;

  /** Keep about this share of the triangles (meshoptimizer's simplifier), 0.01-0.99. */
  @IsOptional()
  @IsNumber()
  @Min(0.01)
  @Max(0.99)
  simplify?: number;

  /** Quantize and write EXT_meshopt_compression (smaller, needs a meshopt decoder in the viewer). */
  @IsOptional()
  @IsBoolean()
  compress?: boolean;
}

export class ModelBounds {
  @IsNumber({}, { each: true })
  min: number[];

  @IsNumber({}, { each: true })
  max: number[];
}

/** One translation: of one version of a file, with the options it was asked with. */
export class Translation {
  /** The model id (the GLB's). */
  @IsUUID()
  modelId: string;

  @IsString()
  workspace: string;

  /** `<username>/<filename>` as translated (a branch's file under its branch name). */
  @IsString()
  name: string;

  @IsUUID()
  versionId: string;

  @IsIn(TRANSLATION_STATUSES)
  status: TranslationStatus;

  /** 0-100. */
  @IsInt()
  progress: number;

  /** Why it failed. */
  @IsString()
  @Nullable()
  reason: string | null;

  @IsString()
  format: string;

  @IsNumber()
  @Nullable()
  simplify: number | null;

  @IsBoolean()
  compress: boolean;

  @IsInt()
  @Nullable()
  meshes: number | null;

  @IsInt()
  @Nullable()
  vertices: number | null;

  @IsInt()
  @Nullable()
  triangles: number | null;

  @ValidateNested()
  @Type(() => ModelBounds)
  @Nullable()
  bounds: ModelBounds | null;

  /** Bytes of the GLB. */
  @IsInt()
  @Nullable()
  size: number | null;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  @Nullable()
  finishedAt: string | null;
}

/** One row of `GET /api/viewer/status-map` (the body is an array of them). */
export class TranslationStatusEntry {
  @IsString()
  name: string;

  @IsIn(TRANSLATION_STATUSES)
  status: TranslationStatus;

  @IsInt()
  progress: number;

  @IsOptional()
  @IsString()
  reason?: string;

  @IsUUID()
  modelId: string;

  @IsUUID()
  versionId: string;
}

export class StatusMapQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;
}

export class ModelLookupQuery extends StatusMapQuery {
  @IsString()
  @Matches(MODEL_NAME, { message: 'filename is <filename> or <username>/<filename>' })
  filename: string;

  @IsOptional()
  @Matches(BRANCH_PATTERN, { message: 'branch names are [a-z0-9_-]' })
  branch?: string;

  /** Lifetime of the signed GLB URL (default 15 minutes, at most 7 days). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  ttlMs?: number;
}

/** The translated model of a file's current version: its id and, once translated, a signed GLB URL. */
export class ModelLookup extends Translation {
  /** Signed URL of the GLB (no credentials needed) while `status` is `success`; else null. */
  @IsString()
  @Nullable()
  url: string | null;

  @IsISO8601()
  @Nullable()
  expiresAt: string | null;
}
