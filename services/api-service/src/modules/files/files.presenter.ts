import type { FileRecord, FileRevision } from '@hwp/contracts';
import type { FileEntity, FileRevisionEntity } from './file.entity';
import { extensionOf, joinPath } from './file-names';

/** The file record of section 2.4 (URLs are paths on this host). */
export function presentFile(file: FileEntity, revision: FileRevisionEntity): FileRecord {
  const base = `/files/${file.id}`;
  return {
    id: file.id,
    name: file.name,
    size: revision.size,
    type: extensionOf(file.name),
    mime_type: revision.mimeType,
    created_at: file.createdAt.toISOString(),
    updated_at: file.updatedAt.toISOString(),
    created_by: file.createdBy,
    current_revision_id: file.currentRevisionId,
    revision_count: file.revisionCount,
    path: joinPath(file.folderPath, file.name),
    folder_path: file.folderPath,
    url: `${base}/download`,
    preview_url: `${base}/preview`,
    thumbnail_url: `${base}/thumbnail`,
    product_id: file.productId,
    description: file.description,
    tags: file.tags,
    metadata: revision.metadata,
    permissions: file.permissions,
    public: file.isPublic,
    processing_status: revision.processingStatus,
    processing_error: revision.processingError,
    classification: revision.classification,
    tenant_id: file.tenantId,
    sha256: revision.sha256,
  };
}

export function presentRevision(revision: FileRevisionEntity, file: FileEntity): FileRevision {
  return {
    id: revision.id,
    file_id: revision.fileId,
    number: revision.number,
    name: revision.name,
    size: revision.size,
    mime_type: revision.mimeType,
    sha256: revision.sha256,
    created_by: revision.createdBy,
    created_at: revision.createdAt.toISOString(),
    reverted_from: revision.revertedFrom,
    processing_status: revision.processingStatus,
    current: revision.id === file.currentRevisionId,
  };
}
