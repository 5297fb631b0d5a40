import type {
  CurrencyRates,
  DomainTemplate,
  NumberingRule,
  PartDomain,
  PartLifecycle,
  PartVersionStatus,
} from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { registerWorkspaceOwned, WorkspaceRow } from '../workspace-access/workspace-scope';
import { ApprovalColumns } from './approval-columns';

/** numeric comes back from pg as a string; the service keeps it a number. */
const numericAsNumber = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/**
 * A part of a workspace (section 2.8). The migration holds what the decorators cannot say: the
 * case-insensitive unique part number per workspace, the search indexes and the CHECKs.
 */
@Entity({ name: 'parts' })
export class PartEntity extends WorkspaceRow {
  @Column({ name: 'part_number', type: 'text' })
  partNumber: string;

  @Column('text')
  name: string;

  @Column('text')
  description: string;

  @Column('text')
  domain: PartDomain;

  @Column('text')
  uom: string;

  @Column('text')
  lifecycle: PartLifecycle;

  @Column('text', { array: true })
  tags: string[];

  @Column('jsonb')
  attributes: Record<string, unknown>;

  @Column({ name: 'manufacturer_name', type: 'text', nullable: true })
  manufacturerName: string | null;

  @Column({ name: 'manufacturer_part_number', type: 'text', nullable: true })
  manufacturerPartNumber: string | null;

  @Column({
    name: 'unit_cost',
    type: 'numeric',
    precision: 18,
    scale: 6,
    nullable: true,
    transformer: numericAsNumber,
  })
  unitCost: number | null;

  @Column({ type: 'text', nullable: true })
  currency: string | null;

  @Column({ name: 'rohs_compliant', type: 'boolean', nullable: true })
  rohsCompliant: boolean | null;

  @Column({ name: 'reach_compliant', type: 'boolean', nullable: true })
  reachCompliant: boolean | null;

  @Column({ name: 'conflict_minerals', type: 'text', nullable: true })
  conflictMinerals: string | null;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** The import that created the part (its report's `importId`), and the row of its file; else null. */
  @Column({ name: 'import_id', type: 'uuid', nullable: true })
  importId?: string | null;

  @Column({ name: 'import_row', type: 'integer', nullable: true })
  importRow?: number | null;
}

/** A version of a part with its approval flow (DECISIONS.md section 5). */
@Entity({ name: 'part_versions' })
export class PartVersionEntity extends ApprovalColumns {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'part_id', type: 'uuid' })
  partId: string;

  @Column('text')
  revision: string;

  @Column('text')
  status: PartVersionStatus;

  @Column({ name: 'change_note', type: 'text', nullable: true })
  changeNote: string | null;

  @Column('jsonb')
  data: Record<string, unknown>;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** The audit trail of a part, written in the transaction of the change it records. */
@Entity({ name: 'part_history' })
export class PartHistoryEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'part_id', type: 'uuid' })
  partId: string;

  @Column('uuid')
  actor: string;

  @Column('timestamptz')
  at: Date;

  @Column('text')
  action: string;

  @Column('jsonb')
  changes: Record<string, unknown>;
}

/** A workspace's numbering rules and domain templates; absent while the defaults apply. */
@Entity({ name: 'bom_settings' })
export class BomSettingsEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'numbering_rules', type: 'jsonb' })
  numberingRules: Partial<Record<PartDomain, NumberingRule>>;

  @Column({ name: 'domain_templates', type: 'jsonb' })
  domainTemplates: Partial<Record<PartDomain, DomainTemplate>>;

  @Column({ name: 'currency_rates', type: 'jsonb', nullable: true })
  currencyRates: CurrencyRates | null;

  @Column({ name: 'updated_by', type: 'uuid' })
  updatedBy: string;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** The last number handed out per workspace and domain. */
@Entity({ name: 'part_number_counters' })
export class PartNumberCounterEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @PrimaryColumn('text')
  domain: PartDomain;

  @Column({ name: 'last_value', type: 'bigint' })
  lastValue: string;
}

// Read and written through a WorkspaceScope only (versions and history through a part found there).
registerWorkspaceOwned(PartEntity);
registerWorkspaceOwned(BomSettingsEntity);
registerWorkspaceOwned(PartNumberCounterEntity);

export const partEntities = [
  PartEntity,
  PartVersionEntity,
  PartHistoryEntity,
  BomSettingsEntity,
  PartNumberCounterEntity,
];
