import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { FileRecord, MAX_FOLDER_PATH } from './files.dto';

/** Several files in one request, and large files in parts through pre-signed S3 URLs. */

/** One entry of `POST /files/multiple-upload`'s answer: the record, or why that file was refused. */
export class MultipleUploadItem {
  @IsString()
  name: string;

  @IsInt()
  status: number;

  @IsOptional()
  @ValidateNested()
  @Type(() => FileRecord)
  file?: FileRecord;

  @IsOptional()
  @IsString()
  error?: string;

  @IsOptional()
  @IsString()
  code?: string;
}

export class MultipleUploadResult {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => MultipleUploadItem)
  items: MultipleUploadItem[];
}

/** `POST /files/upload-url`: a pre-signed S3 multipart upload for a large file. */
export class UploadUrlRequest {
  @IsString()
  @MaxLength(1000)
  name: string;

  @IsInt()
  @Min(1)
  size: number;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  @Matches(/^[\w.+-]+\/[\w.+-]+$/, { message: 'mime_type must be a media type like model/step' })
  mime_type?: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_FOLDER_PATH)
  folder_path?: string;
}

export class UploadPartUrl {
  @IsInt()
  @Min(1)
  part_number: number;

  /** The exact byte count its PUT must send (the URL is signed for it). */
  @IsInt()
  @Min(0)
  size: number;

  @IsString()
  url: string;
}

/** The pre-signed multipart upload: PUT each part's bytes to its URL, keep each answer's ETag header. */
export class UploadUrlResponse {
  @IsUUID()
  upload_id: string;

  /** Every part but the last has exactly this many bytes. */
  @IsInt()
  part_size: number;

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => UploadPartUrl)
  parts: UploadPartUrl[];

  @IsISO8601()
  expires_at: string;
}

export class CompletedUploadPart {
  @IsInt()
  @Min(1)
  part_number: number;

  @IsString()
  @MaxLength(200)
  etag: string;
}

/** `POST /files/upload-complete`: the parts' ETags, and the fields of an upload. */
export class UploadCompleteRequest {
  @IsUUID()
  upload_id: string;

  @IsArray()
  @ArrayMaxSize(10_000)
  @ValidateNested({ each: true })
  @Type(() => CompletedUploadPart)
  parts: CompletedUploadPart[];

  @IsOptional()
  @IsString()
  @MaxLength(200)
  product_id?: string;

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  tags?: string[];

  @IsOptional()
  @IsIn([true, false])
  public?: boolean;

  @IsOptional()
  @IsIn([true, false])
  replace_if_exists?: boolean;
}
