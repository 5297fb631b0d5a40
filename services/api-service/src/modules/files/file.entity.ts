import type {
  AnnotationPosition,
  AnnotationStatus,
  AnnotationTarget,
  FileClassification,
  FileMetadata,
  FilePermissions,
  ProcessingStatus,
} from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { registerTenantOwned } from '../tenancy/tenant-scope';

/** A file of a tenant: where it sits, who may do what, and which revision is current. */
@Entity({ name: 'files' })
export class FileEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  /** Normalised: `/`, or `/a/b` (no trailing slash). */
  @Column({ name: 'folder_path', type: 'text' })
  folderPath: string;

  @Column('text')
  name: string;

  @Column({ name: 'product_id', type: 'text', nullable: true })
  productId: string | null;

  @Column('text')
  description: string;

  @Column('text', { array: true })
  tags: string[];

  @Column({ name: 'is_public', type: 'boolean' })
  isPublic: boolean;

  @Column('jsonb')
  permissions: FilePermissions;

  @Column({ name: 'current_revision_id', type: 'uuid' })
  currentRevisionId: string;

  @Column({ name: 'revision_count', type: 'integer' })
  revisionCount: number;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** One stored version of a file's bytes; never changed once written (revert makes a new one). */
@Entity({ name: 'file_revisions' })
export class FileRevisionEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'file_id', type: 'uuid' })
  fileId: string;

  @Column('integer')
  number: number;

  @Column('text')
  name: string;

  @Column({ name: 'blob_key', type: 'text' })
  blobKey: string;

  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  size: number;

  @Column('text')
  sha256: string;

  @Column({ name: 'mime_type', type: 'text' })
  mimeType: string;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'reverted_from', type: 'uuid', nullable: true })
  revertedFrom: string | null;

  @Column({ name: 'processing_status', type: 'text' })
  processingStatus: ProcessingStatus;

  @Column({ type: 'text', nullable: true })
  classification: FileClassification | null;

  /** Why processing ended `failed` (the sweep gave up, or the file could not be read). */
  @Column({ name: 'processing_error', type: 'text', nullable: true })
  processingError: string | null;

  @Column('jsonb')
  metadata: FileMetadata;

  /**
   * Text of a text-like file for the search index (at most 1 MB), once processing read it. Never
   * loaded with the row (lists would carry megabytes): only the search vector reads it.
   */
  @Column({ name: 'text_content', type: 'text', nullable: true, select: false })
  textContent?: string | null;

  /** Processing stages done for this revision (`{ scan: {...}, metadata: {...} }`): a redelivery resumes. */
  @Column('jsonb')
  stages: Record<string, unknown>;
}

@Entity({ name: 'file_annotations' })
export class FileAnnotationEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'file_id', type: 'uuid' })
  fileId: string;

  @Column({ name: 'revision_id', type: 'uuid', nullable: true })
  revisionId: string | null;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column('text')
  text: string;

  @Column('jsonb')
  position: AnnotationPosition;

  @Column('jsonb')
  target: AnnotationTarget;

  @Column('text')
  color: string;

  @Column('text')
  status: AnnotationStatus;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity({ name: 'file_annotation_replies' })
export class FileAnnotationReplyEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'annotation_id', type: 'uuid' })
  annotationId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column('text')
  text: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

export const fileEntities = [FileEntity, FileRevisionEntity, FileAnnotationEntity, FileAnnotationReplyEntity];
for (const entity of fileEntities) registerTenantOwned(entity);
