import { Column } from 'typeorm';

/**
 * Who moved a part version or a BOM through the approval flow, and when (DECISIONS.md section 5):
 * the columns both tables have, inherited by their entities.
 */
export abstract class ApprovalColumns {
  @Column({ name: 'submitted_by', type: 'uuid', nullable: true })
  submittedBy: string | null;

  @Column({ name: 'submitted_at', type: 'timestamptz', nullable: true })
  submittedAt: Date | null;

  @Column({ name: 'approved_by', type: 'uuid', nullable: true })
  approvedBy: string | null;

  @Column({ name: 'approved_at', type: 'timestamptz', nullable: true })
  approvedAt: Date | null;

  @Column({ name: 'rejected_by', type: 'uuid', nullable: true })
  rejectedBy: string | null;

  @Column({ name: 'rejected_at', type: 'timestamptz', nullable: true })
  rejectedAt: Date | null;

  @Column({ name: 'rejection_reason', type: 'text', nullable: true })
  rejectionReason: string | null;
}

/** The approval columns of a record that has not been submitted yet. */
export function notSubmitted(): ApprovalColumns {
  return {
    submittedBy: null,
    submittedAt: null,
    approvedBy: null,
    approvedAt: null,
    rejectedBy: null,
    rejectedAt: null,
    rejectionReason: null,
  };
}

/** Everyone a record names: its creator and whoever moved it. */
export const approvalActors = (row: ApprovalColumns & { createdBy: string }) => [
  row.createdBy,
  row.submittedBy,
  row.approvedBy,
  row.rejectedBy,
];

/** The approval fields of a response: usernames and ISO times, `null` until each step happens. */
export function presentApproval(row: ApprovalColumns, names: Map<string, string>) {
  const name = (id: string | null) => (id ? (names.get(id) ?? '') : null);
  const iso = (date: Date | null) => (date ? date.toISOString() : null);
  return {
    submittedBy: name(row.submittedBy),
    submittedAt: iso(row.submittedAt),
    approvedBy: name(row.approvedBy),
    approvedAt: iso(row.approvedAt),
    rejectedBy: name(row.rejectedBy),
    rejectedAt: iso(row.rejectedAt),
    rejectionReason: row.rejectionReason,
  };
}
