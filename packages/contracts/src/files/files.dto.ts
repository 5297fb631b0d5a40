import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { type Page, PageOf, PageQuery } from '../common/paging';
import { FreeFormObject, Nullable } from '../common/schema';

/** Processing states of a file revision (DECISIONS.md section 3). */
export const PROCESSING_STATUSES = ['pending', 'processing', 'ready', 'quarantined', 'failed'] as const;
export type ProcessingStatus = (typeof PROCESSING_STATUSES)[number];

/** What processing found a file to be, by content (DECISIONS.md section 3). */
export const FILE_CLASSIFICATIONS = ['cad-3d', 'cad-2d', 'image', 'document', 'archive', 'other'] as const;
export type FileClassification = (typeof FILE_CLASSIFICATIONS)[number];

/** A folder path: `/`-separated names, at most 1024 characters (normalised by the service). */
export const MAX_FOLDER_PATH = 1024;
/** A file name: at most 255 UTF-8 bytes, no `/`, `\`, NUL or control characters, not `.` or `..`. */
export const MAX_FILE_NAME_BYTES = 255;
/** Ids a permission list holds at most. */
export const MAX_PERMISSION_IDS = 200;

/** Form booleans arrive as strings; `true`/`1` and `false`/`0` are read, anything else refused. */
const formBoolean = ({ value }: { value: unknown }) =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

/** Tags arrive repeated (`tags=a&tags=b`), comma separated or as a JSON array. */
const formTags = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text);
    } catch {
      return value;
    }
  }
  return text === '' ? [] : text.split(',').map((t) => t.trim());
};

/** The text fields of `POST /files/upload` and `POST /files/multiple-upload` (multipart form). */
export class UploadFileForm {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  product_id?: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_FOLDER_PATH)
  folder_path?: string;

  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @IsOptional()
  @Transform(formTags)
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  tags?: string[];

  @IsOptional()
  @Transform(formBoolean)
  @IsIn([true, false])
  public?: boolean;

  /** A file of the same name in the same folder gets a new revision instead of a 409. */
  @IsOptional()
  @Transform(formBoolean)
  @IsIn([true, false])
  replace_if_exists?: boolean;
}

/** `GET /files`: filters and the search of the processing index. */
export class ListFilesQuery extends PageQuery {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_FOLDER_PATH)
  folder_path?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  product_id?: string;

  /** Words to find in names, descriptions, tags, metadata and text content. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  /** Files carrying every one of these tags (comma separated or repeated). */
  @IsOptional()
  @Transform(formTags)
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  tags?: string[];
}

/** view, edit, delete: each a list of user or team (tenant) ids; an empty list leaves it to roles. */
export class FilePermissions {
  @IsArray()
  @ArrayMaxSize(MAX_PERMISSION_IDS)
  @IsUUID('all', { each: true })
  view: string[];

  @IsArray()
  @ArrayMaxSize(MAX_PERMISSION_IDS)
  @IsUUID('all', { each: true })
  edit: string[];

  @IsArray()
  @ArrayMaxSize(MAX_PERMISSION_IDS)
  @IsUUID('all', { each: true })
  delete: string[];
}

export class FileDimensions {
  @IsNumber()
  @Nullable()
  width: number | null;

  @IsNumber()
  @Nullable()
  height: number | null;

  @IsNumber()
  @Nullable()
  depth: number | null;

  /** `mm`, `in`, `px`, ... or null when the file does not say. */
  @IsString()
  @Nullable()
  units: string | null;
}

/** What processing read out of the content; a value it could not know is null, never guessed. */
export class FileMetadata {
  @IsOptional()
  @ValidateNested()
  @Type(() => FileDimensions)
  @Nullable()
  dimensions?: FileDimensions | null;

  @IsOptional()
  @IsInt()
  @Nullable()
  components?: number | null;

  @IsOptional()
  @IsString()
  @Nullable()
  software?: string | null;

  @IsOptional()
  @FreeFormObject('Format-specific facts (triangle counts, layers, versions, ...)')
  custom_properties?: Record<string, unknown>;
}

/** The file record of section 2.4 with DECISIONS.md section 3's additions. */
export class FileRecord {
  @IsUUID()
  id: string;

  @IsString()
  name: string;

  @IsInt()
  size: number;

  /** The extension, lower case, without the dot (`step`, `stl`); empty when there is none. */
  @IsString()
  type: string;

  @IsString()
  mime_type: string;

  @IsISO8601()
  created_at: string;

  @IsISO8601()
  updated_at: string;

  @IsUUID()
  created_by: string;

  @IsUUID()
  current_revision_id: string;

  @IsInt()
  revision_count: number;

  /** Folder path plus name, e.g. `/chassis/bracket.step`. */
  @IsString()
  path: string;

  @IsString()
  folder_path: string;

  @IsString()
  url: string;

  @IsString()
  preview_url: string;

  @IsString()
  thumbnail_url: string;

  @IsString()
  @Nullable()
  product_id: string | null;

  @IsString()
  description: string;

  @IsArray()
  @IsString({ each: true })
  tags: string[];

  @ValidateNested()
  @Type(() => FileMetadata)
  metadata: FileMetadata;

  @ValidateNested()
  @Type(() => FilePermissions)
  permissions: FilePermissions;

  @IsIn([true, false])
  public: boolean;

  @IsIn(PROCESSING_STATUSES)
  processing_status: ProcessingStatus;

  /** Why processing ended `failed` (unreadable content, over a limit, never finished), else null. */
  @IsString()
  @Nullable()
  processing_error: string | null;

  @IsIn(FILE_CLASSIFICATIONS)
  @Nullable()
  classification: FileClassification | null;

  @IsUUID()
  tenant_id: string;

  @IsString()
  sha256: string;
}

export const FileList = PageOf(FileRecord, 'FileList');
export type FileList = Page<FileRecord>;

/** `GET /files/{id}/access-token`: read-only, this file only, 15 minutes. */
export class FileAccessToken {
  @IsString()
  token: string;

  @IsISO8601()
  expires_at: string;
}

/** `GET /files/{id}/download?token=`: a bearer token or a file access token. */
export class DownloadQuery {
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  token?: string;
}
