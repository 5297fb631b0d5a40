import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsString, IsUUID, Min, ValidateNested } from 'class-validator';
import { type Page, PageOf } from '../common/paging';
import { Nullable } from '../common/schema';
import {
  FILE_CLASSIFICATIONS,
  type FileClassification,
  FileMetadata,
  PROCESSING_STATUSES,
  type ProcessingStatus,
} from './files.dto';

/** A file's revisions, and what processing read out of the current one. */

/** One revision of a file: its bytes never change once stored. */
export class FileRevision {
  @IsUUID()
  id: string;

  @IsUUID()
  file_id: string;

  /** 1 for the first upload, then 2, 3, ... */
  @IsInt()
  @Min(1)
  number: number;

  @IsString()
  name: string;

  @IsInt()
  size: number;

  @IsString()
  mime_type: string;

  @IsString()
  sha256: string;

  @IsUUID()
  created_by: string;

  @IsISO8601()
  created_at: string;

  /** The revision this one copies (a revert), else null. */
  @IsUUID()
  @Nullable()
  reverted_from: string | null;

  @IsIn(PROCESSING_STATUSES)
  processing_status: ProcessingStatus;

  @IsIn([true, false])
  current: boolean;
}

export const FileRevisionList = PageOf(FileRevision, 'FileRevisionList');
export type FileRevisionList = Page<FileRevision>;

/** `GET /files/{file_id}/cad-metadata`: what processing read out of the current revision. */
export class CadMetadata {
  @IsUUID()
  file_id: string;

  @IsUUID()
  revision_id: string;

  @IsIn(PROCESSING_STATUSES)
  processing_status: ProcessingStatus;

  @IsIn(FILE_CLASSIFICATIONS)
  @Nullable()
  classification: FileClassification | null;

  /** The format the content is (`stl-binary`, `step`, `dxf`, `png`, ...), or null before processing or when unknown. */
  @IsString()
  @Nullable()
  format: string | null;

  @ValidateNested()
  @Type(() => FileMetadata)
  metadata: FileMetadata;
}
