import {
  ArrayMaxSize,
  ArrayMinSize,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { Nullable } from '../common/schema';

/** Image operation states (DECISIONS.md section 5): PROCESSING -> COMPLETED | ERROR. */
export const IMAGE_OPERATION_STATUSES = ['PROCESSING', 'COMPLETED', 'ERROR'] as const;
export type ImageOperationStatus = (typeof IMAGE_OPERATION_STATUSES)[number];

/** The image tools of section 4.2 that this host runs. */
export const IMAGE_TOOLS = [
  'generation-a',
  'generation-b',
  'product-photo',
  'product-mockups',
  'analysis',
  'vectorize',
  'remove-background',
  'upscale',
] as const;
export type ImageTool = (typeof IMAGE_TOOLS)[number];

/** Largest source image a tool reads (bytes) and its largest side after decoding (pixels). */
export const MAX_SOURCE_IMAGE_BYTES = 25 * 1024 * 1024;
export const MAX_SOURCE_IMAGE_PIXELS = 40_000_000;

/** Section 2.3, with the stored operation's `id` and `tool` (DECISIONS.md section 3). */
export class ImageOperationResult {
  @IsUUID()
  id: string;

  @IsIn(IMAGE_TOOLS)
  tool: ImageTool;

  @IsIn(IMAGE_OPERATION_STATUSES)
  status: ImageOperationStatus;

  /** URLs (`<PUBLIC_API_URL>/files/{id}/download`; a path when that is unset) of the images the operation saved. */
  @IsString({ each: true })
  generated_images: string[];

  /** The analysis text (image-analysis only). */
  @IsString()
  @Nullable()
  analysis: string | null;

  @IsString()
  @Nullable()
  error_message: string | null;

  @IsISO8601()
  created_at: string;

  @IsISO8601()
  @Nullable()
  completed_at: string | null;
}

/** `reference_image`: this host's file URL (`/files/{id}/download`, read from storage) or a remote http(s) URL. */
class SourceImage {
  @IsString()
  @Length(1, 2048)
  reference_image: string;
}

/** Where results are saved (a folder of the tenant's files; default `/generated`). */
class ToFolder extends SourceImage {
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  folder_path?: string;
}

/** `/image-generation-providerA`: section 2.6. */
export class GenerationRequest {
  @IsString()
  @Length(1, 4000)
  prompt: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(4)
  nbr_images?: number;

  @IsOptional()
  @IsString()
  @MaxLength(1024)
  folder_path?: string;

  /** A custom style of the tenant: its description and palette join the prompt, its first reference image guides. */
  @IsOptional()
  @IsUUID()
  style_id?: string;
}

/** `/image-generation-providerB`. */
export class NegativeGenerationRequest extends GenerationRequest {
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  negative_prompt?: string;
}

/** `/image-generation-product-photo` and `/image-generation-product-mockups`: image to image when `reference_image` is given. */
export class ProductImageRequest extends NegativeGenerationRequest {
  @IsOptional()
  @IsString()
  @Length(1, 2048)
  reference_image?: string;
}

export class ImageAnalysisRequest extends SourceImage {
  @IsString()
  @Length(1, 4000)
  prompt: string;
}

export class VectorizeRequest extends ToFolder {
  /** A guide: words like "logo", "flat" or "simple" mean fewer colours; "detailed" or "photo" more. */
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  prompt?: string;
}

export class RemoveBackgroundRequest extends ToFolder {}

export class UpscaleRequest {
  /** The source image: this host's file URL or file id. */
  @IsString()
  @Length(1, 2048)
  image_path: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(4)
  scale_factor?: number;

  @IsOptional()
  @IsIn(['clarity', 'generative'])
  mode?: 'clarity' | 'generative';

  @IsOptional()
  @IsString()
  @MaxLength(1024)
  folder_path?: string;
}

/** DECISIONS.md section 3. */
export class CustomStyle {
  @IsUUID()
  id: string;

  @IsString()
  name: string;

  @IsString()
  description: string;

  @IsString({ each: true })
  reference_images: string[];

  /** Dominant colours of the reference images, `#rrggbb`, most frequent first. */
  @IsString({ each: true })
  palette: string[];

  @IsUUID()
  created_by: string;

  @IsISO8601()
  created_at: string;
}

export class CreateStyleRequest {
  @IsString()
  @Length(1, 100)
  name: string;

  /** This host's file URLs (or file ids) of the reference images. */
  @IsString({ each: true })
  @Length(1, 2048, { each: true })
  @ArrayMinSize(1)
  @ArrayMaxSize(8)
  reference_images: string[];

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

export const CustomStyleList = ItemsOf(CustomStyle, 'CustomStyleList');
export type CustomStyleList = Items<CustomStyle>;

/** `image.operation.updated.v1`: an operation of a tenant changed state (the WebSocket `image-operations` channel). */
export interface ImageOperationUpdatedData {
  userId: string;
  operation: ImageOperationResult;
}
