import type { Translation } from '@hwp/contracts';
import type { ModelFormat } from '@hwp/geometry';
import { Column, Entity } from 'typeorm';
import { registerWorkspaceOwned, WorkspaceRow } from '../workspace-access/workspace-scope';

/**
 * A model translation (migrations 1764400000000-CreateModelTranslations and
 * 1764800000000-TranslationLease): one row a file version and option set, claimed by one worker at
 * a time under a lease. bigint columns stay strings (as pg answers them).
 */
@Entity({ name: 'model_translations' })
export class TranslationEntity extends WorkspaceRow {
  @Column({ name: 'file_id', type: 'uuid' })
  fileId: string;

  @Column({ name: 'version_id', type: 'uuid' })
  versionId: string;

  @Column({ type: 'text', default: 'main' })
  branch: string;

  /** `<username>/<filename>` (a branch's suffix name for a branch). */
  @Column('text')
  name: string;

  @Column('text')
  format: ModelFormat;

  @Column({ type: 'double precision', nullable: true })
  simplify: number | null;

  @Column({ type: 'boolean', default: false })
  compress: boolean;

  /** The option set (`<simplify>|<compress>`): unique with the version. */
  @Column({ name: 'options_key', type: 'text' })
  optionsKey: string;

  @Column({ type: 'text', default: 'pending' })
  status: Translation['status'];

  @Column({ type: 'smallint', default: 0 })
  progress: number;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'claimed_by', type: 'text', nullable: true })
  claimedBy: string | null;

  @Column({ name: 'claimed_at', type: 'timestamptz', nullable: true })
  claimedAt: Date | null;

  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @Column({ name: 'glb_key', type: 'text', nullable: true })
  glbKey: string | null;

  @Column({ type: 'bigint', nullable: true })
  size: string | null;

  @Column({ type: 'integer', nullable: true })
  meshes: number | null;

  @Column({ type: 'bigint', nullable: true })
  vertices: string | null;

  @Column({ type: 'bigint', nullable: true })
  triangles: string | null;

  @Column({ type: 'jsonb', nullable: true })
  bounds: { min: number[]; max: number[] } | null;

  @Column({ name: 'requested_by', type: 'uuid', nullable: true })
  requestedBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

// Read and written through a WorkspaceScope, but for the worker, its lease sweep and the signed GLB
// URL, which take a job by id (translations.repository.ts, the unscoped functions).
registerWorkspaceOwned(TranslationEntity);

export const viewerEntities = [TranslationEntity];
