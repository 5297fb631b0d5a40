import type { ImageOperationStatus, ImageTool } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { registerTenantOwned } from '../tenancy/tenant-scope';

/** One call of an image tool (section 2.3), kept for `GET /image-operations/{id}`. */
@Entity({ name: 'image_operations' })
export class ImageOperationEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column('text')
  tool: ImageTool;

  @Column('text')
  status: ImageOperationStatus;

  /** The request as sent (validated), for the record. */
  @Column('jsonb')
  input: Record<string, unknown>;

  /** Ids of the files the operation saved. */
  @Column({ name: 'result_file_ids', type: 'uuid', array: true })
  resultFileIds: string[];

  @Column({ type: 'text', nullable: true })
  analysis: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage: string | null;

  /** The provider's job of a long operation (a prediction id), polled until it ends. */
  @Column({ name: 'provider_job', type: 'text', nullable: true })
  providerJob: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}

/** A reusable style made from reference images (DECISIONS.md section 3). */
@Entity({ name: 'custom_styles' })
export class CustomStyleEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column('text')
  name: string;

  @Column('text')
  description: string;

  @Column({ name: 'reference_images', type: 'text', array: true })
  referenceImages: string[];

  @Column({ type: 'text', array: true })
  palette: string[];

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

export const imageEntities = [ImageOperationEntity, CustomStyleEntity];
for (const entity of imageEntities) registerTenantOwned(entity);
