import type { AlternateApproval, BomStatus, BomType } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { ApprovalColumns } from '../parts';
import { registerWorkspaceOwned } from '../workspace-access/workspace-scope';

/** numeric and bigint come back from pg as strings; the service keeps them numbers. */
const numberColumn = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/** A BOM header (section 2.9) with the approval flow of DECISIONS.md section 5. */
@Entity({ name: 'boms' })
export class BomEntity extends ApprovalColumns {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'assembly_part_id', type: 'uuid' })
  assemblyPartId: string;

  @Column({ name: 'assembly_version_id', type: 'uuid', nullable: true })
  assemblyVersionId: string | null;

  @Column('text')
  type: BomType;

  @Column('text')
  revision: string;

  @Column('text')
  status: BomStatus;

  @Column({ name: 'change_note', type: 'text', nullable: true })
  changeNote: string | null;

  @Column({ name: 'source_bom_id', type: 'uuid', nullable: true })
  sourceBomId: string | null;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** One line of a BOM; reached only through a BOM found in the workspace. */
@Entity({ name: 'bom_items' })
export class BomItemEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'bom_id', type: 'uuid' })
  bomId: string;

  @Column({ name: 'parent_item_id', type: 'uuid', nullable: true })
  parentItemId: string | null;

  @Column({ name: 'child_part_id', type: 'uuid' })
  childPartId: string;

  @Column({ name: 'child_version_id', type: 'uuid', nullable: true })
  childVersionId: string | null;

  @Column({ type: 'numeric', precision: 24, scale: 6, transformer: numberColumn })
  qty: number;

  @Column('text')
  uom: string;

  @Column('text', { array: true })
  refdes: string[];

  @Column('text')
  notes: string;

  @Column({ name: 'sort_index', type: 'integer' })
  sortIndex: number;

  @Column('jsonb')
  attributes: Record<string, unknown>;

  /** YYYY-MM-DD (pg `date` read as text, so no time zone shifts it). */
  @Column({ name: 'date_from', type: 'date', nullable: true })
  dateFrom: string | null;

  @Column({ name: 'date_to', type: 'date', nullable: true })
  dateTo: string | null;

  @Column({ name: 'serial_from', type: 'bigint', nullable: true, transformer: numberColumn })
  serialFrom: number | null;

  @Column({ name: 'serial_to', type: 'bigint', nullable: true, transformer: numberColumn })
  serialTo: number | null;

  @Column({ name: 'lot_from', type: 'text', nullable: true })
  lotFrom: string | null;

  @Column({ name: 'lot_to', type: 'text', nullable: true })
  lotTo: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

@Entity({ name: 'bom_item_alternates' })
export class BomAlternateEntity {
  @PrimaryColumn({ name: 'item_id', type: 'uuid' })
  itemId: string;

  @PrimaryColumn({ name: 'part_id', type: 'uuid' })
  partId: string;

  @Column('integer')
  position: number;

  @Column('text')
  approval: AlternateApproval;

  @Column('text')
  rationale: string;

  @Column({ name: 'proposed_by', type: 'uuid' })
  proposedBy: string;

  @Column({ name: 'approved_by', type: 'uuid', nullable: true })
  approvedBy: string | null;
}

registerWorkspaceOwned(BomEntity);

export const bomEntities = [BomEntity, BomItemEntity, BomAlternateEntity];
