import { Column, Entity, PrimaryColumn } from 'typeorm';
import { registerTenantOwned } from '../tenancy/tenant-scope';

/** A pre-signed multipart upload in flight: its id becomes the revision's id when it completes. */
@Entity({ name: 'file_uploads' })
export class FileUploadEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'multipart_id', type: 'text' })
  multipartId: string;

  @Column({ name: 'blob_key', type: 'text' })
  blobKey: string;

  @Column('text')
  name: string;

  @Column({ name: 'folder_path', type: 'text' })
  folderPath: string;

  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  size: number;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

registerTenantOwned(FileUploadEntity);
